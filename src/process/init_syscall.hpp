// The raw system call of paddock-init (init_main.cpp): no libc in that program. Shared by its
// translation units only; everything else uses libc.
#pragma once

namespace paddock::process::init {

#if defined(__x86_64__)
inline long raw_syscall(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0) {
  long ret;  // (no call here needs more than five arguments: statx's)
  register long r10 asm("r10") = d;
  register long r8 asm("r8") = e;
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
               : "rcx", "r11", "memory");
  return ret;
}
#elif defined(__aarch64__)
inline long raw_syscall(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0) {
  register long x8 asm("x8") = n;
  register long x0 asm("x0") = a;
  register long x1 asm("x1") = b;
  register long x2 asm("x2") = c;
  register long x3 asm("x3") = d;
  register long x4 asm("x4") = e;
  asm volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
  return x0;
}
#else
#error "paddock-init: add this architecture's syscall convention and _start"
#endif

}  // namespace paddock::process::init
