"""strtol / strtoul as the target's C library answers them: `long` is 64 bits on LP64 and 32 on
ILP32 (base/string_view.py's `long_bits`). The oracle is the C library itself: a small program,
built by gcc for x86_64, gcc -m32 for i386 (run natively) and the Debian cross gcc for armv7 (run by
qemu-arm), prints value, errno and consumed for every text; ireeabi's parsers must give the same on
that data model."""
from __future__ import annotations

import subprocess

import pytest

from support.debian_tools import debian_file, debian_tool, m32_include_dir
from ireeabi.abi.targets import TARGETS
from ireeabi.base.string_view import atoi_int32, atoi_uint32, c_atoi, c_parse_long

TEXTS = ["4294967295", "-1", "2147483647", "2147483648", "-2147483648", "-2147483649", "0x7fffffff",
         "0xffffffff", "0x100000000", "-4294967295", "-4294967296", "99999999999999",
         "-99999999999999999999", "99999999999999999999", "017", "-017", "+12", "0", "-0", "junk",
         " \t-5", "12abc", "-0x80000000", "-0x80000001"]

PROGRAM = r"""
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    char* end = NULL;
    errno = 0;
    long s = strtol(argv[i], &end, 0);
    int serr = errno, sused = end != argv[i];
    errno = 0;
    unsigned long u = strtoul(argv[i], &end, 0);
    printf("%lld %d %d %llu %d %d\n", (long long)s, serr, sused, (unsigned long long)u, errno,
           end != argv[i]);
  }
  return 0;
}
"""

COMPILERS = {
    "x86_64": (["gcc"], []),
    "i386": (["gcc", "-m32"], []),  # -isystem m32_include_dir(): <errno.h> under -m32
    "armv7": (["arm-linux-gnueabihf-gcc", "-static"], []),
}


def c_answers(target: str, tmp_path) -> list[tuple[int, ...]]:
    cc, runner = COMPILERS[target]
    if target == "i386":
        debian_file("/usr/lib32/libc.so", "libc6-dev-i386")
        cc = [*cc, "-isystem", str(m32_include_dir())]
    src = tmp_path / "strtol.c"
    src.write_text(PROGRAM)
    exe = tmp_path / f"strtol-{target}"
    subprocess.run([debian_tool(cc[0]), *cc[1:], "-O1", "-o", str(exe), str(src)], check=True,
                   capture_output=True, timeout=300)
    if target == "armv7":
        runner = [debian_tool("qemu-arm")]
    out = subprocess.run([*runner, str(exe), *TEXTS], check=True, capture_output=True, text=True,
                         timeout=300).stdout
    return [tuple(int(x) for x in line.split()) for line in out.splitlines()]


@pytest.mark.parametrize("target", sorted(COMPILERS))
def test_strtol_and_strtoul_narrow_as_the_targets_c_library(target, tmp_path):
    long_bits = 8 * TARGETS[target].scalar("long").size
    answers = c_answers(target, tmp_path)
    assert len(answers) == len(TEXTS)
    for text, (s, serr, sused, u, uerr, uused) in zip(TEXTS, answers):
        got_s = c_parse_long("strtol", text, 64, 0, long_bits)
        got_u = c_parse_long("strtoul", text, 64, 0, long_bits)
        assert (got_s[0], got_s[2], int(got_s[1])) == (s, serr, sused), (target, text)
        assert (got_u[0], got_u[2], int(got_u[1])) == (u, uerr, uused), (target, text)


def test_int32_inputs_follow_the_long_width():
    """`4294967295` as an i32: wraps to -1 with a 64-bit long, out of range with a 32-bit one (the
    io_types.i32s case of the oracle differential, on i386 and armv7); uint32 takes it on both;
    the flags' atoi saturates at LONG_MAX on ILP32 before its cast to int."""
    assert atoi_int32("4294967295", long_bits=64) == -1
    assert atoi_int32("4294967295", long_bits=32) is None
    assert atoi_uint32("4294967295", long_bits=32) == 4294967295
    assert atoi_uint32("-4294967296", long_bits=64) == 0
    assert atoi_uint32("-4294967296", long_bits=32) is None
    assert c_atoi("4294967296", long_bits=64) == 0
    assert c_atoi("4294967296", long_bits=32) == 2147483647
