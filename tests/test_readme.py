"""The README's Python examples run as written, and the numbers its comments claim hold."""
import re
from pathlib import Path

README = (Path(__file__).parent.parent / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 3


def test_examples_run_and_comments_hold():
    for block in BLOCKS:
        ns: dict = {}
        exec(compile(block, "README.md", "exec"), ns)
        # Lines of the form `expr   # N...` or `expr  # [a, b]...`: the comment's leading value is
        # what the expression evaluates to.
        for line in block.splitlines():
            m = re.match(r"^(\S.*?)\s+#\s*(\[[\d, ]*\]|\d+\b|'[^']*')", line)
            if m and "=" not in m.group(1).split("(")[0]:
                assert eval(m.group(1), ns) == eval(m.group(2)), line
