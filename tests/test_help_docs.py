"""Help text and docs say what the program does: each command's usage on a misspelt option,
help for every command, the README's scheduler table complete, one chain syntax everywhere."""

import re

import rtsched
from conftest import EXAMPLES, ROOT, run_cli


def test_a_misspelt_option_gets_the_commands_usage_and_the_closest_option():
    r = run_cli("simulate", EXAMPLES / "dhall.yaml", "--durration", "2s", check=2)
    assert r.stderr.startswith("usage: rtsched simulate "), r.stderr
    assert r.stderr.rstrip().endswith("rtsched simulate: error: unrecognized arguments: --durration 2s "
                                      "(--durration: did you mean --duration?)"), r.stderr
    r = run_cli("validate", EXAMPLES / "dhall.yaml", "--zzzz", check=2)
    assert r.stderr.startswith("usage: rtsched validate ") and "unrecognized arguments: --zzzz\n" in r.stderr, r.stderr
    r = run_cli("--verbsion", check=2)  # before any command: the top-level usage
    assert r.stderr.startswith("usage: rtsched [-h]") and "did you mean --version?" in r.stderr, r.stderr


def test_every_command_has_help_text():
    top = run_cli("--help", check=0).stdout
    for command, words in [("validate", "likely mixed units"), ("demo", "Perfetto trace")]:
        assert re.search(rf"^\s+{command}\s+\S", top, re.M), top
        r = run_cli(command, "--help", check=0)
        assert words in " ".join(r.stdout.split()), r.stdout


def test_the_readme_scheduler_table_lists_every_scheduler():
    readme = (ROOT / "README.md").read_text()
    table = readme.split("## Schedulers", 1)[1].split("\n\n", 2)[1]
    for name in (s["name"] for s in rtsched.schedulers()):
        assert f"`{name}`" in table, name


def test_one_chain_syntax_in_the_docs_and_help():
    texts = {p: p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]}
    texts["simulate --help"] = run_cli("simulate", "--help", check=0).stdout
    texts["partition --help"] = run_cli("partition", "--help", check=0).stdout
    for where, text in texts.items():
        assert not re.search(r"\b(lwfg|ffd|wfd|bfd),(ffd|wfd|bfd|global)\b", text), where
    assert "lwfg+ffd" in texts[ROOT / "README.md"]
