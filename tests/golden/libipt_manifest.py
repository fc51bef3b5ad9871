"""The rows of ../shared/testdata/libipt/generated/MANIFEST.tsv, one dict per test run.

Columns: test cpu dir load_addr pt bin ptxed_cmd ptdump_cmd ptdump_check ptxed_check.
"""


def manifest_rows(manifest):
    """`manifest` is a pathlib.Path to MANIFEST.tsv."""
    lines = manifest.read_text().splitlines()
    header = lines[0].split("\t")
    return [dict(zip(header, line.split("\t"))) for line in lines[1:]]
