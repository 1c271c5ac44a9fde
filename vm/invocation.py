"""A call from its begin to its end, across the yields between (runtime/src/iree/vm/invocation.c,
iree_vm_invoke_state_t): what `Context.begin` gives, whatever kind of module runs the call.

The context's module kind keeps the call's stack and runs it (`resume_call`: for a bytecode module,
dispatch.c's resume, the innermost frame going on); here is what IREE's invocation.c does with it:
resume until done (`finish`, as iree_vm_invoke), a bound on the resumes as IREE's VM test runner
sets one, and `abort` (iree_vm_abort_invoke).
"""
from __future__ import annotations

from typing import Any, Callable, Protocol

from ..abi.printable import printable
from ..base.status import StatusCode
from .errors import InvocationStateError, VmStatusError


class InvokingContext(Protocol):
    """What an Invocation uses of the context it runs in (vm/context.py's `Context`)."""

    suspended: set

    def run_locked(self, what: str, run: Callable, *args: Any) -> Any: ...

    def resume_call(self, stack: list, budget: int) -> "list | int": ...

    def abort_call(self, stack: list) -> None: ...


# IREE's VM test runner (runtime/src/iree/vm/testing/test_runner.h, kMaxResumeCount): the resumes it
# allows one test function before it fails it as a likely infinite yield loop.
TEST_RUNNER_MAX_RESUMES = 10000


class Invocation:
    """One call of an export from its begin to its end (iree_vm_invoke_state_t, runtime/src/iree/
    vm/invocation.c): `Context.begin` runs it until it returns or yields. While `deferred`, its
    stack is kept, each frame where it resumes; `resume()` runs it on (the bytecode module's
    resume_call, dispatch_resume: the innermost frame goes on) until the next yield or the end;
    `finish()` resumes until done, as iree_vm_invoke and IREE's VM test runner do. Then `results`
    holds its results (ref results owned by the caller). A step budget (the bytecode `Context(max_steps=)`)
    bounds the whole invocation, across its resumes. An error ends it (its frames released);
    `abort()` drops a deferred one (iree_vm_abort_invoke), as `Context.close` does."""

    def __init__(self, context: "InvokingContext", function_name: str, stack: "list | None", budget: int,
                 results: "list | None") -> None:
        self.context = context
        self.function_name = function_name
        self.resumes = 0  # resumes run so far
        self._stack = stack  # None once done (or failed, or aborted)
        self._budget = budget
        self._results = results

    @property
    def deferred(self) -> bool:
        """Whether the call yielded and waits for a resume (IREE: DEFERRED)."""
        return self._stack is not None

    @property
    def results(self) -> list:
        if self._results is None:
            state = "has yielded and not finished" if self._stack is not None else "did not finish"
            raise InvocationStateError(f"results of '{printable(self.function_name)}': the call {state}")
        return self._results

    def resume(self) -> bool:
        """Run the call on from where it yielded; True when it is done. A call that is not
        deferred fails as IREE's resume of an empty stack does (FAILED_PRECONDITION)."""
        return self.context.run_locked(f"resume of '{printable(self.function_name)}'", self._resume)

    def _resume(self) -> bool:
        stack = self._stack
        if stack is None:
            raise VmStatusError(StatusCode.FAILED_PRECONDITION, "no frame at top of stack to resume")
        self.resumes += 1
        try:
            out = self.context.resume_call(stack, self._budget)
        except BaseException:
            self._end()  # the loop released the frames
            raise
        if isinstance(out, list):
            self._end()
            self._results = out
            return True
        self._budget = out
        return False

    def finish(self, max_resumes: int | None = None) -> list:
        """Resume until done; the results. Past `max_resumes` resumes (None: no bound, as
        iree_vm_invoke; IREE's VM test runner allows TEST_RUNNER_MAX_RESUMES) the call is aborted
        and fails as that runner fails it (RESOURCE_EXHAUSTED)."""
        while self._stack is not None:
            if max_resumes is not None and self.resumes >= max_resumes:
                self.abort()
                raise VmStatusError(StatusCode.RESOURCE_EXHAUSTED,
                                    f"resume limit ({max_resumes}) exceeded for function "
                                    f"'{self.function_name}'; possible infinite yield loop")
            self.resume()
        return self.results

    def abort(self) -> None:
        """Drop a deferred call: every frame's references released. Idempotent."""
        stack = self._stack
        if stack is None:
            return
        self._end()
        self.context.abort_call(stack)

    def _end(self) -> None:
        self._stack = None
        self.context.suspended.discard(self)


__all__ = ["Invocation", "InvokingContext", "TEST_RUNNER_MAX_RESUMES"]
