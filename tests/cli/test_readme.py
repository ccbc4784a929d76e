"""README.md starts with the answer: under 1,200 words above its
reference section, the two marked commands (CI runs the test command), and every link
into docs/usage.md lands on a heading there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text("utf-8")


def test_readme_is_short_above_its_reference_section() -> None:
    head = README.split("\n## Reference\n")[0]
    assert "\n## Reference\n" in README
    assert len(head.split()) < 1200


def test_the_two_commands_are_marked() -> None:
    for marker in ("<!-- main-command -->", "<!-- test-command -->"):
        after = README.split(marker)[1].lstrip("\n")
        assert after.startswith("```bash\n"), marker
    test = README.split("<!-- test-command -->")[1].split("```bash\n")[1].split("\n")[0]
    assert test.endswith("python -m pytest") and "scripts/install-local-model" in test
    assert "confide run calbench" in README.split("<!-- main-command -->")[1].split("```")[1]


def test_links_into_the_docs_land_on_headings() -> None:
    links = re.findall(r"\]\((docs/[^)#]+)(?:#([^)]+))?\)", README)
    assert len(links) > 5
    for path, anchor in links:
        text = (ROOT / path).read_text("utf-8")
        if anchor:
            slugs = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-")
                     for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}
            assert anchor in slugs, (path, anchor)
