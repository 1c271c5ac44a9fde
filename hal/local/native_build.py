"""The C helper's source and its cffi build, on its own so that both builders use one text.

setup.py hands `make_ffi` to cffi's setuptools integration (`cffi_modules`), which builds the
extension `ireeabi.hal.local._native` at install time; `native.py` loads it, and builds the same source at
run time only when that extension is missing or was built from another version of this file (an
editable install edited since). cffi runs this file alone at install, outside the package: it uses
only the standard library and cffi.

What the C does:

- `ireeabi_issue_workgroups`: the inline workgroup loop of IREE's local executables (z outer, x
  inner), writing the workgroup ids into a workgroup_state whose field offsets the caller passes from
  the catalog layout (no struct is declared in C, so the catalog stays the one source of truth).
- The fault trap: while a kernel (or a library's query or initializer, `ireeabi_call_guarded`) runs,
  SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP and SIGSYS are caught on an alternate stack and the call
  returns IREEABI_FAULTED with the signal, the faulting address and the workgroup id, instead of the
  process dying. The handlers are installed by the first trapped call and stay (a call only checks
  that they are still ours, and puts them back if something replaced them); a signal that arrives
  while no trapped call runs on that thread goes to the handler before ours (e.g. Python's
  faulthandler), or kills the process as it would have. What no trap can catch: a kernel writing
  into memory it does not own that is mapped (another live binding, the heap): that corrupts
  silently, as in IREE.
- Stopping a kernel, through the same trap: SIGINT (Ctrl-C) on the thread of a trapped call ends it
  with IREEABI_CANCELLED (taken over only from a handler, as Python's: an ignored SIGINT stays
  ignored; with IREEABI_CHAIN_INTERRUPT the handler before ours runs too); a budget of CPU time
  (`budget_ns`, per call: per dispatch for the workgroup loop) is a timer on the thread's CPU-time
  clock (timer_create, CLOCK_THREAD_CPUTIME_ID, SIGEV_THREAD_ID) whose signal ends the call with
  IREEABI_DEADLINE_EXCEEDED. An instruction count would be deterministic, but needs a hardware
  counter (perf_event_open PERF_COUNT_HW_INSTRUCTIONS), which virtual machines often lack. Every
  way out leaves the thread as it was: handlers run with nothing blocked (SA_NODEFER, empty
  sa_mask), so the signal mask needs no restoring; the handler's alternate stack is left by the
  jump (the kernel sees the stack pointer outside it) and freed with its timer at the thread's exit.
  A stopped kernel leaves its outputs half written, no more: the library stays usable.
- `ireeabi_import_thunk`: the environment's import thunk (`fn(params, context, reserved)`).
- `ireeabi_fpu_control` / `ireeabi_set_fpu_control` / `ireeabi_fpu_flush_bits`: the calling thread's
  floating-point control register (x86 MXCSR, AArch64 FPCR, ARM FPSCR; none elsewhere) and the bits
  that flush denormals to zero in it, for `fpu_state.py` (the state IREE's local HAL pushes around a
  dispatch).
- `ireeabi_tlb_fill_address`: the emulated CPU's TLB fill (emulated_cpu.py), a Unicorn
  `UC_HOOK_TLB_FILL` callback called at every TLB miss of emulated code, so in C: each page maps to
  itself, readable and executable where it is code (a fetch, or any access inside one of the
  executable ranges the CPU lists in its `ireeabi_code_pages_t`; writable too for a store there),
  else readable and writable. The
  struct carries Unicorn's constants too (this file includes no Unicorn header).
- `ireeabi_native_digest`: the digest of this file's C text it was built from.
"""
from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import cffi

INSTALLED_NAME = "ireeabi.hal.local._native"  # the extension setup.py builds

CDEF = """
typedef struct {
  int signal;
  uintptr_t address;
  uint32_t x, y, z;
} ireeabi_fault_t;
int ireeabi_issue_workgroups(uintptr_t fn, uintptr_t environment, uintptr_t dispatch_state,
                             uintptr_t workgroup_state, uint32_t off_x, uint32_t off_y, uint32_t off_z,
                             uint32_t count_x, uint32_t count_y, uint32_t count_z, uint64_t* calls,
                             ireeabi_fault_t* fault, int64_t budget_ns, int flags);
int ireeabi_call_guarded(uintptr_t fn, int kind, uint32_t a0, uintptr_t a1, uintptr_t* result,
                         ireeabi_fault_t* fault, int64_t budget_ns, int flags);
uintptr_t ireeabi_import_thunk_address(void);
int ireeabi_timer_signal(void);
int64_t ireeabi_timer_remaining_ns(void);
uint64_t ireeabi_fpu_control(void);
void ireeabi_set_fpu_control(uint64_t value);
uint64_t ireeabi_fpu_flush_bits(void);
typedef struct {
  uint64_t count;
  const uint64_t* ranges;
  uint32_t fetch;
  uint32_t write;
  uint32_t code_perms;
  uint32_t data_perms;
  uint64_t fills;
} ireeabi_code_pages_t;
uintptr_t ireeabi_tlb_fill_address(void);
"""

SOURCE = r"""
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1  /* (Python.h, included first, defines it already) */
#endif
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

typedef struct {
  int signal;
  uintptr_t address;
  uint32_t x, y, z;
} ireeabi_fault_t;

/* A trapped call's results besides its own: how it was left (the sigsetjmp codes are 1, 2, 3). */
#define IREEABI_FAULTED (-0x7E11)
#define IREEABI_CANCELLED (-0x7E12)
#define IREEABI_DEADLINE_EXCEEDED (-0x7E13)
#define IREEABI_NO_TIMER (-0x7E14)  /* the budget's timer could not be made (errno says why) */
/* flags: SIGINT in a trapped call also goes to the handler before ours (one of one's own). */
#define IREEABI_CHAIN_INTERRUPT 1

typedef int (*ireeabi_dispatch_fn_t)(const void*, const void*, const void*);
typedef int (*ireeabi_import_fn_t)(void*, void*, void*);

static int ireeabi_import_thunk(ireeabi_import_fn_t fn, void* params, void* context, void* reserved) {
  return fn(params, context, reserved);
}

uintptr_t ireeabi_import_thunk_address(void) { return (uintptr_t)&ireeabi_import_thunk; }

/* The signals a trapped call catches: the faults, Ctrl-C (SIGINT) and its CPU-time timer's. */
#define IREEABI_FAULTS 6
#define IREEABI_SIGNALS 8
#define IREEABI_INTERRUPT_SLOT 6
#define IREEABI_TIMER_SLOT 7
static int ireeabi_signals[IREEABI_SIGNALS] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS, SIGINT, 0};
static __thread sigjmp_buf* ireeabi_trap;     /* the trapped call running on this thread, if any */
static __thread ireeabi_fault_t* ireeabi_out;  /* where its fault goes */
static __thread int ireeabi_chain;             /* its flags' IREEABI_CHAIN_INTERRUPT */
static __thread volatile int ireeabi_armed;    /* its CPU-time timer is armed */
static __thread void* ireeabi_altstack;
static __thread int ireeabi_has_timer;
static __thread timer_t ireeabi_timer;
/* The handlers before ours (a signal outside a trapped call goes to them). */
static struct sigaction ireeabi_previous[IREEABI_SIGNALS];
static pthread_mutex_t ireeabi_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t ireeabi_once = PTHREAD_ONCE_INIT;
static pthread_key_t ireeabi_thread_key;
/* How many threads are in a trapped call: while none is, a signal goes on without the handler
   reading this library's thread-local variables (whose first read in a thread may allocate). */
static int ireeabi_trapped_threads;

int ireeabi_timer_signal(void) { return SIGRTMIN + 4; }

/* At a thread's exit: what its trapped calls set up (alternate stack, timer) goes with it. */
static void ireeabi_thread_exit(void* unused) {
  (void)unused;
  if (ireeabi_has_timer) {
    timer_delete(ireeabi_timer);
    ireeabi_has_timer = 0;
  }
  if (ireeabi_altstack != NULL) {
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_flags = SS_DISABLE;
    if (sigaltstack(&ss, NULL) == 0) {
      free(ireeabi_altstack);
      ireeabi_altstack = NULL;
    }
  }
}

/* A forked child has no timers (and no other thread in a trapped call): made again on demand. */
static void ireeabi_forked(void) {
  ireeabi_has_timer = 0;
  ireeabi_armed = 0;
  __atomic_store_n(&ireeabi_trapped_threads, 0, __ATOMIC_RELEASE);
}

static void ireeabi_make_key(void) {
  pthread_key_create(&ireeabi_thread_key, ireeabi_thread_exit);
  pthread_atfork(NULL, NULL, ireeabi_forked);
  ireeabi_signals[IREEABI_TIMER_SLOT] = ireeabi_timer_signal();
}

/* The current thread's timer has run out (a signal of an earlier arming finds it re-armed). */
static int ireeabi_timer_expired(void) {
  struct itimerspec now;
  if (!ireeabi_has_timer || timer_gettime(ireeabi_timer, &now) != 0) return 0;
  return now.it_value.tv_sec == 0 && now.it_value.tv_nsec == 0;
}

int64_t ireeabi_timer_remaining_ns(void) {
  struct itimerspec now;
  if (!ireeabi_has_timer || timer_gettime(ireeabi_timer, &now) != 0) return -1;
  return (int64_t)now.it_value.tv_sec * 1000000000 + now.it_value.tv_nsec;
}

static void ireeabi_pass_on(int slot, int sig, siginfo_t* info, void* ucontext);

static void ireeabi_on_signal(int sig, siginfo_t* info, void* ucontext) {
  int slot = 0;
  while (slot < IREEABI_SIGNALS && ireeabi_signals[slot] != sig) ++slot;
  int ours = slot == IREEABI_TIMER_SLOT && info->si_code == SI_TIMER &&
             info->si_value.sival_ptr == (void*)ireeabi_signals;
  if (__atomic_load_n(&ireeabi_trapped_threads, __ATOMIC_ACQUIRE) == 0) {
    if (!ours) ireeabi_pass_on(slot, sig, info, ucontext);
    return;
  }
  sigjmp_buf* trap = ireeabi_trap;
  if (ours) {
    /* A timer's signal after its call ended, or from an earlier arming, is ignored. */
    if (trap == NULL || !ireeabi_armed || !ireeabi_timer_expired()) return;
  } else if (trap == NULL || slot == IREEABI_TIMER_SLOT) {
    /* not a trapped call of this thread, or that signal sent by someone else */
    ireeabi_pass_on(slot, sig, info, ucontext);
    return;
  }
  if (slot == IREEABI_INTERRUPT_SLOT && ireeabi_chain) ireeabi_pass_on(slot, sig, info, ucontext);
  ireeabi_trap = NULL;  /* a second signal now goes on as outside a trapped call */
  ireeabi_out->signal = sig;
  ireeabi_out->address = slot < IREEABI_FAULTS ? (uintptr_t)info->si_addr : 0;
  siglongjmp(*trap, slot < IREEABI_FAULTS ? 1 : slot == IREEABI_INTERRUPT_SLOT ? 2 : 3);
}

/* A signal outside a trapped call goes to whoever handled it before (e.g. Python's faulthandler or
   its SIGINT handler), or does what it would have done without us. */
static void ireeabi_pass_on(int slot, int sig, siginfo_t* info, void* ucontext) {
  if (slot >= IREEABI_SIGNALS) return;
  struct sigaction* prev = &ireeabi_previous[slot];
  if (prev->sa_flags & SA_SIGINFO) {
    if (prev->sa_sigaction != ireeabi_on_signal) prev->sa_sigaction(sig, info, ucontext);
    return;
  }
  if (prev->sa_handler == SIG_IGN) return;
  if (prev->sa_handler != SIG_DFL) {
    prev->sa_handler(sig);
    return;
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

static int ireeabi_ours(const struct sigaction* sa) {
  return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == ireeabi_on_signal;
}

/* SIGINT is taken over only from a handler (Python's): an ignored one stays ignored and a default
   one still ends the process. */
static int ireeabi_wanted(int slot, const struct sigaction* sa) {
  if (ireeabi_ours(sa)) return 0;
  if (slot != IREEABI_INTERRUPT_SLOT) return 1;
  return (sa->sa_flags & SA_SIGINFO) || (sa->sa_handler != SIG_IGN && sa->sa_handler != SIG_DFL);
}

/* Our handlers, on an alternate stack (a kernel that runs off its own stack still gets a report).
   They stay installed once a trapped call has run (a signal outside one goes to the handler before
   ours), so a call costs no system call beyond the queries that see whether something (Python's
   faulthandler, a new SIGINT handler) replaced ours since: then they are put back. */
static int ireeabi_trap_begin(int64_t budget_ns) {
  pthread_once(&ireeabi_once, ireeabi_make_key);
  if (ireeabi_altstack == NULL) {
    size_t size = 64 * 1024;
    void* stack = malloc(size);
    if (stack != NULL) {
      stack_t ss;
      ss.ss_sp = stack;
      ss.ss_size = size;
      ss.ss_flags = 0;
      if (sigaltstack(&ss, NULL) == 0) {
        ireeabi_altstack = stack;
        pthread_setspecific(ireeabi_thread_key, stack);  /* so that the thread's exit frees it */
      } else {
        free(stack);
      }
    }
  }
  if (budget_ns > 0 && !ireeabi_has_timer) {
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = ireeabi_signals[IREEABI_TIMER_SLOT];
    ev.sigev_value.sival_ptr = (void*)ireeabi_signals;  /* tells our timers' signals from others' */
    ev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &ireeabi_timer) != 0) return IREEABI_NO_TIMER;
    ireeabi_has_timer = 1;
    pthread_setspecific(ireeabi_thread_key, &ireeabi_has_timer);
  }
  struct sigaction current;
  sigaction(SIGSEGV, NULL, &current);
  int fresh = ireeabi_ours(&current);
  if (fresh) {
    sigaction(SIGINT, NULL, &current);
    fresh = !ireeabi_wanted(IREEABI_INTERRUPT_SLOT, &current);
  }
  if (fresh && budget_ns > 0) {
    sigaction(ireeabi_signals[IREEABI_TIMER_SLOT], NULL, &current);
    fresh = ireeabi_ours(&current);
  }
  if (!fresh) {
    pthread_mutex_lock(&ireeabi_lock);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = ireeabi_on_signal;
    /* SA_NODEFER and an empty sa_mask: no signal is blocked in the handler, so leaving it by
       siglongjmp needs no saved mask (sigsetjmp(.., 0): no system call per trapped call) and the
       thread's mask is as it was. */
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < IREEABI_SIGNALS; ++i) {
      sigaction(ireeabi_signals[i], NULL, &current);
      if (!ireeabi_wanted(i, &current)) continue;
      sigaction(ireeabi_signals[i], &sa, &ireeabi_previous[i]);
    }
    pthread_mutex_unlock(&ireeabi_lock);
  }
  __atomic_add_fetch(&ireeabi_trapped_threads, 1, __ATOMIC_ACQ_REL);
  return 0;
}

/* The trap is set (`ireeabi_trap`): arm the timer, if the call has a budget (-1: it could not be). */
static int ireeabi_arm(int64_t budget_ns) {
  if (budget_ns <= 0) return 0;
  struct itimerspec when;
  memset(&when, 0, sizeof when);
  when.it_value.tv_sec = budget_ns / 1000000000;
  when.it_value.tv_nsec = budget_ns % 1000000000;
  ireeabi_armed = 1;
  if (timer_settime(ireeabi_timer, 0, &when, NULL) == 0) return 0;
  ireeabi_armed = 0;
  return -1;
}

/* The call is over (returned, or left by a signal): no trap, and the timer disarmed. */
static void ireeabi_trap_end(void) {
  ireeabi_trap = NULL;
  __atomic_sub_fetch(&ireeabi_trapped_threads, 1, __ATOMIC_ACQ_REL);
  if (ireeabi_armed) {
    struct itimerspec off;
    memset(&off, 0, sizeof off);
    timer_settime(ireeabi_timer, 0, &off, NULL);
    ireeabi_armed = 0;
  }
}

static int ireeabi_left_by(int code) {
  return code == 1 ? IREEABI_FAULTED : code == 2 ? IREEABI_CANCELLED : IREEABI_DEADLINE_EXCEEDED;
}

/* As IREE's inline issue: an error leaves only the x loop; y and z go on, and the result is the
   status of the last call made. The z id is 16-bit in workgroup_state_v0. A trapped fault ends the
   whole dispatch: IREEABI_FAULTED, with the workgroup that faulted; so do Ctrl-C
   (IREEABI_CANCELLED) and a dispatch that used more than `budget_ns` of its thread's CPU time
   (IREEABI_DEADLINE_EXCEEDED; 0: no budget); IREEABI_NO_TIMER when that budget's timer could
   not be made (nothing ran). */
int ireeabi_issue_workgroups(uintptr_t fn, uintptr_t environment, uintptr_t dispatch_state,
                             uintptr_t workgroup_state, uint32_t off_x, uint32_t off_y, uint32_t off_z,
                             uint32_t count_x, uint32_t count_y, uint32_t count_z, uint64_t* calls,
                             ireeabi_fault_t* fault, int64_t budget_ns, int flags) {
  ireeabi_dispatch_fn_t f = (ireeabi_dispatch_fn_t)fn;
  unsigned char* wg = (unsigned char*)workgroup_state;
  volatile int ret = 0;
  volatile uint64_t n = 0;
  sigjmp_buf jump;
  *calls = 0;
  int begun = ireeabi_trap_begin(budget_ns);
  if (begun != 0) return begun;
  int code = sigsetjmp(jump, 0);
  if (code != 0) {
    ireeabi_trap_end();
    *calls = n;
    return ireeabi_left_by(code);
  }
  ireeabi_out = fault;
  ireeabi_chain = flags & IREEABI_CHAIN_INTERRUPT;
  ireeabi_trap = &jump;
  if (ireeabi_arm(budget_ns) != 0) {
    ireeabi_trap_end();
    return IREEABI_NO_TIMER;
  }
  for (uint32_t z = 0; z < count_z; ++z) {
    uint16_t z16 = (uint16_t)z;
    memcpy(wg + off_z, &z16, sizeof z16);
    for (uint32_t y = 0; y < count_y; ++y) {
      memcpy(wg + off_y, &y, sizeof y);
      for (uint32_t x = 0; x < count_x; ++x) {
        memcpy(wg + off_x, &x, sizeof x);
        fault->x = x;
        fault->y = y;
        fault->z = z;
        ret = f((const void*)environment, (const void*)dispatch_state, wg);
        ++n;
        if (ret != 0) break;
      }
    }
  }
  ireeabi_trap_end();
  *calls = n;
  return ret;
}

/* The calling thread's floating-point control register, and the bits of it that flush denormal
   inputs and results to zero (0 where the architecture has no such register here). */
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
uint64_t ireeabi_fpu_control(void) { return (uint64_t)_mm_getcsr(); }
void ireeabi_set_fpu_control(uint64_t value) { _mm_setcsr((unsigned int)value); }
uint64_t ireeabi_fpu_flush_bits(void) { return 0x8040; }  /* MXCSR FTZ (bit 15) | DAZ (bit 6) */
#elif defined(__aarch64__)
uint64_t ireeabi_fpu_control(void) {
  uint64_t v;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(v));
  return v;
}
void ireeabi_set_fpu_control(uint64_t value) { __asm__ __volatile__("msr fpcr, %0" : : "r"(value)); }
uint64_t ireeabi_fpu_flush_bits(void) { return 0x1080000; }  /* FPCR FZ (bit 24) | FZ16 (bit 19) */
#elif defined(__arm__) && defined(__ARM_FP)
uint64_t ireeabi_fpu_control(void) {
  uint32_t v;
  __asm__ __volatile__("vmrs %0, fpscr" : "=r"(v));
  return v;
}
void ireeabi_set_fpu_control(uint64_t value) {
  uint32_t v = (uint32_t)value;
  __asm__ __volatile__("vmsr fpscr, %0" : : "r"(v));
}
uint64_t ireeabi_fpu_flush_bits(void) { return 0x1000000; }  /* FPSCR FZ (bit 24) */
#else
uint64_t ireeabi_fpu_control(void) { return 0; }
void ireeabi_set_fpu_control(uint64_t value) { (void)value; }
uint64_t ireeabi_fpu_flush_bits(void) { return 0; }
#endif

/* The emulated CPU's executable ranges: `count` [lo, hi) pairs in `ranges`, and Unicorn's values
   of the fetch and write access types and of the permissions a code and a data page's entry get; `fills`
   counts the calls (for benchmarks). */
typedef struct {
  uint64_t count;
  const uint64_t* ranges;
  uint32_t fetch;
  uint32_t write;
  uint32_t code_perms;
  uint32_t data_perms;
  uint64_t fills;
} ireeabi_code_pages_t;

/* Unicorn's uc_tlb_entry. */
typedef struct {
  uint64_t paddr;
  uint32_t perms;
} ireeabi_tlb_entry_t;

/* Unicorn's uc_cb_tlbevent_t: the entry for `address` (its page maps to itself). */
static _Bool ireeabi_tlb_fill(void* uc, uint64_t address, int type, ireeabi_tlb_entry_t* entry,
                              void* user_data) {
  const ireeabi_code_pages_t* code = (const ireeabi_code_pages_t*)user_data;
  uint32_t perms = code->data_perms;
  (void)uc;
  ((ireeabi_code_pages_t*)user_data)->fills++;
  if ((uint32_t)type == code->fetch) {
    perms = code->code_perms;
  } else {
    for (uint64_t i = 0; i < code->count; i++) {
      if (code->ranges[2 * i] <= address && address < code->ranges[2 * i + 1]) {
        /* a store to a page of code keeps it executable (its stores stay on the slow path, which
           finds the translated code they change); a read-only one faults on the region's check */
        perms = code->code_perms | ((uint32_t)type == code->write ? code->data_perms : 0);
        break;
      }
    }
  }
  entry->paddr = address;
  entry->perms = perms;
  return 1;
}

uintptr_t ireeabi_tlb_fill_address(void) { return (uintptr_t)&ireeabi_tlb_fill; }

/* One call of library code with the trap: kind 0 is void(void) (initializers), kind 1 is
   void*(uint32_t, void*) (iree_hal_executable_library_query). Results as the issue's. */
int ireeabi_call_guarded(uintptr_t fn, int kind, uint32_t a0, uintptr_t a1, uintptr_t* result,
                         ireeabi_fault_t* fault, int64_t budget_ns, int flags) {
  sigjmp_buf jump;
  int begun = ireeabi_trap_begin(budget_ns);
  if (begun != 0) return begun;
  int code = sigsetjmp(jump, 0);
  if (code != 0) {
    ireeabi_trap_end();
    return ireeabi_left_by(code);
  }
  ireeabi_out = fault;
  ireeabi_chain = flags & IREEABI_CHAIN_INTERRUPT;
  ireeabi_trap = &jump;
  if (ireeabi_arm(budget_ns) != 0) {
    ireeabi_trap_end();
    return IREEABI_NO_TIMER;
  }
  if (kind == 0) {
    ((void (*)(void))fn)();
    *result = 0;
  } else {
    *result = (uintptr_t)((void* (*)(uint32_t, void*))fn)(a0, (void*)a1);
  }
  ireeabi_trap_end();
  return 0;
}
"""


# Identifies the C text above: a built helper reports the digest of the text it was built from.
DIGEST = hashlib.sha256((CDEF + SOURCE).encode()).hexdigest()[:16]


def make_ffi(module_name: str = INSTALLED_NAME) -> "cffi.FFI":
    """A `cffi.FFI` ready to build the helper as extension `module_name` (cffi's `cffi_modules` calls
    this with no argument)."""
    import cffi

    ffi = cffi.FFI()
    ffi.cdef(CDEF + "const char* ireeabi_native_digest(void);\n")
    ffi.set_source(module_name,
                   SOURCE + f'\nconst char* ireeabi_native_digest(void) {{ return "{DIGEST}"; }}\n',
                   extra_compile_args=["-O2"])
    return ffi
