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
- `ireeabi_import_thunk`: the environment's import thunk (`fn(params, context, reserved)`).
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
                             ireeabi_fault_t* fault);
int ireeabi_call_guarded(uintptr_t fn, int kind, uint32_t a0, uintptr_t a1, uintptr_t* result,
                         ireeabi_fault_t* fault);
uintptr_t ireeabi_import_thunk_address(void);
"""

SOURCE = r"""
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int signal;
  uintptr_t address;
  uint32_t x, y, z;
} ireeabi_fault_t;

#define IREEABI_FAULTED (-0x7E11)

typedef int (*ireeabi_dispatch_fn_t)(const void*, const void*, const void*);
typedef int (*ireeabi_import_fn_t)(void*, void*, void*);

static int ireeabi_import_thunk(ireeabi_import_fn_t fn, void* params, void* context, void* reserved) {
  return fn(params, context, reserved);
}

uintptr_t ireeabi_import_thunk_address(void) { return (uintptr_t)&ireeabi_import_thunk; }

#define IREEABI_SIGNALS 6
static const int ireeabi_signals[IREEABI_SIGNALS] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS};
static __thread sigjmp_buf* ireeabi_trap;     /* the trapped call running on this thread, if any */
static __thread ireeabi_fault_t* ireeabi_out;  /* where its fault goes */
static __thread void* ireeabi_altstack;
/* The handlers before ours (a signal outside a trapped call goes to them). */
static struct sigaction ireeabi_previous[IREEABI_SIGNALS];
static pthread_mutex_t ireeabi_lock = PTHREAD_MUTEX_INITIALIZER;

static void ireeabi_on_fault(int sig, siginfo_t* info, void* ucontext) {
  if (ireeabi_trap != NULL) {
    ireeabi_out->signal = sig;
    ireeabi_out->address = (uintptr_t)info->si_addr;
    siglongjmp(*ireeabi_trap, 1);
  }
  /* Not a trapped call of this thread: give the signal to whoever handled it before. */
  for (int i = 0; i < IREEABI_SIGNALS; ++i) {
    if (ireeabi_signals[i] != sig) continue;
    struct sigaction* prev = &ireeabi_previous[i];
    if (prev->sa_flags & SA_SIGINFO && prev->sa_sigaction != ireeabi_on_fault) {
      prev->sa_sigaction(sig, info, ucontext);
      return;
    }
    if (prev->sa_handler != SIG_IGN && prev->sa_handler != SIG_DFL) {
      prev->sa_handler(sig);
      return;
    }
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Our handlers, on an alternate stack (a kernel that runs off its own stack still gets a report).
   They stay installed once a trapped call has run (a signal outside one goes to the handler before
   ours), so a call costs no system call beyond one query that sees whether something (Python's
   faulthandler, say) replaced ours since: then they are put back. */
static void ireeabi_trap_begin(void) {
  if (ireeabi_altstack == NULL) {
    size_t size = 64 * 1024;
    ireeabi_altstack = malloc(size);
    if (ireeabi_altstack != NULL) {
      stack_t ss;
      ss.ss_sp = ireeabi_altstack;
      ss.ss_size = size;
      ss.ss_flags = 0;
      sigaltstack(&ss, NULL);
    }
  }
  struct sigaction current;
  sigaction(SIGSEGV, NULL, &current);
  if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == ireeabi_on_fault) return;
  pthread_mutex_lock(&ireeabi_lock);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = ireeabi_on_fault;
  /* SA_NODEFER: the signal is not blocked in the handler, so leaving it by siglongjmp needs no
     saved mask (sigsetjmp(.., 0): no system call per trapped call). */
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < IREEABI_SIGNALS; ++i) {
    sigaction(ireeabi_signals[i], NULL, &current);
    if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == ireeabi_on_fault) continue;
    sigaction(ireeabi_signals[i], &sa, &ireeabi_previous[i]);
  }
  pthread_mutex_unlock(&ireeabi_lock);
}

static void ireeabi_trap_end(void) {}

/* As IREE's inline issue: an error leaves only the x loop; y and z go on, and the result is the
   status of the last call made. The z id is 16-bit in workgroup_state_v0. A trapped fault ends the
   whole dispatch: IREEABI_FAULTED, with the workgroup that faulted. */
int ireeabi_issue_workgroups(uintptr_t fn, uintptr_t environment, uintptr_t dispatch_state,
                             uintptr_t workgroup_state, uint32_t off_x, uint32_t off_y, uint32_t off_z,
                             uint32_t count_x, uint32_t count_y, uint32_t count_z, uint64_t* calls,
                             ireeabi_fault_t* fault) {
  ireeabi_dispatch_fn_t f = (ireeabi_dispatch_fn_t)fn;
  unsigned char* wg = (unsigned char*)workgroup_state;
  volatile int ret = 0;
  volatile uint64_t n = 0;
  sigjmp_buf jump;
  ireeabi_trap_begin();
  if (sigsetjmp(jump, 0) != 0) {
    ireeabi_trap = NULL;
    ireeabi_trap_end();
    *calls = n;
    return IREEABI_FAULTED;
  }
  ireeabi_out = fault;
  ireeabi_trap = &jump;
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
  ireeabi_trap = NULL;
  ireeabi_trap_end();
  *calls = n;
  return ret;
}

/* One call of library code with the trap: kind 0 is void(void) (initializers), kind 1 is
   void*(uint32_t, void*) (iree_hal_executable_library_query). */
int ireeabi_call_guarded(uintptr_t fn, int kind, uint32_t a0, uintptr_t a1, uintptr_t* result,
                         ireeabi_fault_t* fault) {
  sigjmp_buf jump;
  ireeabi_trap_begin();
  if (sigsetjmp(jump, 0) != 0) {
    ireeabi_trap = NULL;
    ireeabi_trap_end();
    return IREEABI_FAULTED;
  }
  ireeabi_out = fault;
  ireeabi_trap = &jump;
  if (kind == 0) {
    ((void (*)(void))fn)();
    *result = 0;
  } else {
    *result = (uintptr_t)((void* (*)(uint32_t, void*))fn)(a0, (void*)a1);
  }
  ireeabi_trap = NULL;
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
