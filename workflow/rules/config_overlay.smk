# Profiles select a config overlay with `config: [profile=NAME]`: config/NAME.yaml is merged
# over config/config.yaml (nested keys merged, lists replaced); values given with --config win.
import yaml as _yaml


def _merge(base, over):
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value


_PROFILE = str(config.get("profile", "default"))
if _PROFILE != "default":
    _overlay_path = f"config/{_PROFILE}.yaml"
    if not os.path.exists(_overlay_path):
        raise ValueError(f"profile={_PROFILE}: config overlay {_overlay_path} does not exist")
    with open(_overlay_path) as _fh:
        _overlay = _yaml.safe_load(_fh) or {}
    _cli = {k: v for k, v in config.items() if k in (workflow.config_settings.config or {})}
    _merge(config, _overlay)
    _merge(config, _cli)
