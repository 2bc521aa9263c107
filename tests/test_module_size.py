"""Each module owns one thing and stays readable: none of the package's modules is over
800 lines (the project's layout rule; check/run.py reached 830 before it was split into
run, evaluate and options)."""

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "specgate"
LIMIT = 800


def test_no_module_is_over_the_line_limit() -> None:
    sizes = {
        str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    assert len(sizes) > 100  # the whole package was read
    assert {name: n for name, n in sizes.items() if n > LIMIT} == {}
