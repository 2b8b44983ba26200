"""The demo's captures ship in the package: exactly the scenarios it replays, each the same bytes
as the repository's transcript (in a checkout they are links into ``transcripts/``, and the wheel
copies what they point to, so a link that broke or a scenario added without its files shows
here before it shows in an installed wheel)."""

from __future__ import annotations

from providers.cli.demo import DEMO_SCENARIOS, demo_root
from providers.replay.transcripts import default_root


def test_the_package_holds_exactly_the_demo_scenarios() -> None:
    root = demo_root()
    shipped = {str(p.relative_to(root)) for p in root.glob("*/*") if p.is_file()}
    wanted = {
        f"{backend}/{name}{suffix}"
        for scenario in DEMO_SCENARIOS.values()
        for backend, name in scenario.items()
        for suffix in (".json", ".sse")
    }
    assert shipped == wanted


def test_each_is_the_repository_transcript() -> None:
    root = demo_root()
    for path in sorted(root.glob("*/*")):
        original = default_root() / path.relative_to(root)
        assert path.read_bytes() == original.read_bytes(), path
