"""The README's API examples run as written (both input forms, GridSearchCV on the embedded data)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_api_examples_run(capsys):
    text = README.read_text()
    section = text[text.index("## The solver API"):]
    section = section[:section.index("\n## ", 3)]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 2
    namespace = {}
    for code in blocks:  # the second block continues the first (ds, train, test, y)
        exec(compile(code, str(README), "exec"), namespace)
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2
    accuracy_cv = float(out[0].rsplit(" ", 1)[1])
    accuracy_pre = float(out[1])
    assert accuracy_cv > 0.9 and accuracy_pre > 0.9  # three mfeat views, 200 labels: well above chance (0.1)
