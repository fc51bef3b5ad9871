# The sample program traced into traces/sample/: a static x86-64 Linux program without libc whose
# control flow exercises what a PT decoder must follow: a counted loop (conditional branches),
# direct calls and returns (return compression), calls through a function table (indirect calls,
# TIP packets), a recursive function (deep returns), and write/exit system calls (tracing pauses
# in the kernel). It prints one line and exits with status 0.
#ifndef OUTER_COUNT
#define OUTER_COUNT 12                  /* the benchmark build raises it for a longer trace */
#endif
        .intel_syntax noprefix
        .text
        .globl _start
_start:
        xor     r12d, r12d              # r12: running checksum
        mov     ebx, OUTER_COUNT        # outer loop count
outer:
        mov     edi, ebx
        call    triangle                # direct call
        add     r12, rax
        mov     eax, ebx
        and     eax, 3
        lea     rcx, [rip + ops]
        mov     edi, ebx
        call    [rcx + rax*8]           # indirect call through the table
        add     r12, rax
        dec     ebx
        jnz     outer

        mov     edi, 8
        call    fib                     # recursion: returns unwind a deep call stack
        add     r12, rax

        # write(1, message, length)
        mov     eax, 1
        mov     edi, 1
        lea     rsi, [rip + message]
        mov     edx, OFFSET message_len
        syscall

        # exit(checksum != 0 ? 0 : 1)
        xor     edi, edi
        test    r12, r12
        setz    dil
        mov     eax, 60
        syscall

# triangle(n) = n + (n-1) + ... + 1, with a loop.
triangle:
        xor     eax, eax
1:      add     rax, rdi
        dec     rdi
        jnz     1b
        ret

# fib(n), naive recursion.
fib:
        cmp     edi, 2
        jb      2f
        push    rbx
        push    rdi
        dec     edi
        call    fib
        mov     rbx, rax
        pop     rdi
        sub     edi, 2
        call    fib
        add     rax, rbx
        pop     rbx
        ret
2:      mov     eax, edi
        ret

op_double:
        lea     rax, [rdi + rdi]
        ret
op_square:
        mov     rax, rdi
        imul    rax, rdi
        ret
op_negate:
        mov     rax, rdi
        neg     rax
        ret
op_parity:
        mov     eax, edi
        and     eax, 1
        jz      3f
        mov     eax, 7
3:      ret

        .section .rodata
        .balign 8
ops:
        .quad   op_double, op_square, op_negate, op_parity
message:
        .ascii  "ptprof sample: done\n"
        .set    message_len, . - message
