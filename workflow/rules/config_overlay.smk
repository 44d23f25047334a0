# Profiles add config files with `configfile: [config/NAME.yaml]`, merged by Snakemake over
# config/config.yaml (nested keys merged, lists replaced); values given with --config win.
import yaml as _yaml


def _scalars(value):
    """--config parses nested values as strings ('true', '1e-6', '0' in [0]): read such leaves as YAML scalars."""
    if isinstance(value, dict):
        return {k: _scalars(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scalars(v) for v in value]
    if isinstance(value, str):
        try:
            parsed = _yaml.safe_load(value)
        except _yaml.YAMLError:
            return value
        return parsed if isinstance(parsed, (bool, int, float)) or parsed is None else value
    return value


for _key in list(workflow.config_settings.config or {}):
    if _key in config and isinstance(config[_key], (dict, list)):
        config[_key] = _scalars(config[_key])

