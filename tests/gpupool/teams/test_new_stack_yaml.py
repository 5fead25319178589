"""``new-stack`` writes its stack with a YAML emitter, reads the bytes back, and nothing in a
template or a model config can add a key to the file (issue 16, item 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cli_support import run_in_process

from gpupool.errors import InputError
from gpupool.teams.render import comment_lines, read_back

ROOT = Path(__file__).resolve().parents[3]
TINY = ROOT / "tests" / "fixtures" / "hf" / "tinyllama-1.1b-chat-v1.0.config.json"
SMUGGLED = "secretsprovider: awskms://alias/theirs?region=us-east-1"
# every line break YAML (PyYAML, YAML 1.1) knows: LF, CR, CRLF, NEL, LS, PS
BREAKS = ["\n", "\r", "\r\n", "\x85", "\u2028", "\u2029"]


def written(project: Path, name: str = "research-dev") -> tuple[str, dict[str, object]]:
    text = (project / "stacks" / f"Pulumi.{name}.yaml").read_text(encoding="utf-8")
    return text, yaml.safe_load(text)


@pytest.mark.parametrize("br", BREAKS, ids=["LF", "CR", "CRLF", "NEL", "LS", "PS"])
def test_a_template_description_cannot_break_out_of_the_header(project: Path, br: str) -> None:
    template = project / "box.yaml"
    template.write_text(yaml.safe_dump({"description": f"a tiny box{br}{SMUGGLED}",
                                        "gpu": "T4", "pool": {"name": "box"}}))
    r = run_in_process(["new-stack", "research", "dev", "--template", str(template)])
    assert r.code == 0, r.err
    text, doc = written(project)
    assert list(doc) == ["config"]  # the smuggled line is a comment, not a key
    assert "# Template box: a tiny box\n" in text and f"# {SMUGGLED}.\n" in text
    assert run_in_process(["validate", "research-dev"]).code == 0


@pytest.mark.parametrize("br", BREAKS, ids=["LF", "CR", "CRLF", "NEL", "LS", "PS"])
def test_a_model_configs_name_cannot_break_out_of_the_header(project: Path, br: str) -> None:
    config = json.loads(TINY.read_text())
    config["_name_or_path"] = f"tiny{br}{SMUGGLED}"
    model = project / "config.json"
    model.write_text(json.dumps(config))
    r = run_in_process(["new-stack", "research", "dev", "--template", "inference-service",
                        "--model-config", str(model)])
    assert r.code == 0, r.err
    text, doc = written(project)
    assert list(doc) == ["config"]
    assert "# Sizing: tiny\n" in text and f"\n# {SMUGGLED} (inference, " in text


def test_unprintable_text_is_escaped_in_comments() -> None:
    assert comment_lines(["bell\x07 tab\t esc\x1b[31m bom\ufeff", "", "a\x0bb\x1cc"]) == (
        "# bell\\u0007 tab\\u0009 esc\\u001b[31m bom\\ufeff\n#\n# a\n# b\n# c\n")


def test_the_text_must_read_back_as_the_validated_config() -> None:
    flat = {"gpupool:team": "research"}
    read_back("# ok\nconfig:\n  gpupool:team: research\n", flat, "s.yaml")
    with pytest.raises(InputError, match="reads back with top-level secretsprovider; nothing"):
        read_back(f"{SMUGGLED}\nconfig:\n  gpupool:team: research\n", flat, "s.yaml")
    with pytest.raises(InputError, match="reads back with different gpupool:team; nothing"):
        read_back("config:\n  gpupool:team: other\n", flat, "s.yaml")
    with pytest.raises(InputError, match=r"s.yaml: evil: expected one of Pulumi's stack setting"):
        read_back("evil: 1\nconfig:\n  gpupool:team: research\n", flat, "s.yaml")
