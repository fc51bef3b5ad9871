#include "sideband/demangle.h"

#include <catch2/catch.hpp>

namespace ptprof {
namespace {

TEST_CASE("Demangled gives a C++ symbol's source name and leaves other names alone") {
  CHECK(Demangled("_Z18reg_class_subset_pii") == "reg_class_subset_p(int, int)");
  CHECK(Demangled("_ZN2wi12mul_internalEPlPKljS2_jj6signopPNS_13overflow_typeEb") ==
        "wi::mul_internal(long*, long const*, unsigned int, long const*, unsigned int, "
        "unsigned int, signop, wi::overflow_type*, bool)");
  CHECK(Demangled("_ZNSt6vectorIiSaIiEE9push_backERKi") ==
        "std::vector<int, std::allocator<int> >::push_back(int const&)");
  // C names, and names that only look mangled, as they are.
  CHECK(Demangled("main") == "main");
  CHECK(Demangled("do_syscall_64") == "do_syscall_64");
  CHECK(Demangled("_Z") == "_Z");
  CHECK(Demangled("_Zz_not_a_name") == "_Zz_not_a_name");
  CHECK(Demangled("") == "");
}

TEST_CASE("WithoutParameters leaves the function's qualified name") {
  CHECK(WithoutParameters("toplev::main(int, char**)") == "toplev::main");
  CHECK(WithoutParameters("ns::f<int>(int) const") == "ns::f<int>");
  CHECK(WithoutParameters("foo(int (*)(long))") == "foo");
  CHECK(WithoutParameters("Big::operator()(int)") == "Big::operator()");
  CHECK(WithoutParameters("operator<(A const&, A const&)") == "operator<");
  CHECK(WithoutParameters("operator<<(std::ostream&, X const&)") == "operator<<");
  CHECK(WithoutParameters("f(std::vector<int, std::allocator<int> >)") == "f");
  CHECK(WithoutParameters("ns::x") == "ns::x");
  CHECK(WithoutParameters("main") == "main");
}

TEST_CASE("NamesShown takes a shown name whole or without its parameters") {
  CHECK(NamesShown("Reader::fill(char*)", "Reader::fill(char*)"));
  CHECK(NamesShown("Reader::fill", "Reader::fill(char*)"));
  CHECK(NamesShown("main", "main"));
  CHECK_FALSE(NamesShown("Reader::fil", "Reader::fill(char*)"));
  CHECK_FALSE(NamesShown("Reader::fill", "Reader::fill(char*)::helper(int)"));
}

TEST_CASE("NamesSymbol takes the linkage name or the demangled one, with or without parameters") {
  const std::string main_linkage = "_ZN6toplev4mainEiPPc";  // toplev::main(int, char**)
  CHECK(NamesSymbol("_ZN6toplev4mainEiPPc", main_linkage));
  CHECK(NamesSymbol("toplev::main(int, char**)", main_linkage));
  CHECK(NamesSymbol("toplev::main", main_linkage));
  CHECK_FALSE(NamesSymbol("main", main_linkage));
  CHECK_FALSE(NamesSymbol("toplev::mai", main_linkage));
  CHECK_FALSE(NamesSymbol("", main_linkage));
  CHECK(NamesSymbol("main", "main"));
  CHECK_FALSE(NamesSymbol("main(int)", "main"));  // a C name has no parameters to give
  CHECK(NamesSymbol("std::vector<int, std::allocator<int> >::push_back",
                    "_ZNSt6vectorIiSaIiEE9push_backERKi"));
}

}  // namespace
}  // namespace ptprof
