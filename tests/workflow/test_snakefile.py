"""The Snakemake workflow parses, validates its config and lints clean (dry runs, no jobs executed)."""

import os
import re

import pytest
from conftest import ROOT, copy_workflow, job_stats, run_snakemake



def _snakemake(*args, cwd=ROOT):
    return run_snakemake(*args, cwd=cwd)


def _job_count(stdout, rule):
    counts = job_stats(stdout)
    assert rule in counts, f"rule {rule} not in the dry-run job stats:\n{stdout[-2000:]}"
    return counts[rule]


@pytest.mark.parametrize("profile, seeds", [("ci", 2), ("default", 3), ("mfeat_full", 10)])
def test_dry_run(profile, seeds, tmp_path):
    """One job per (method family, split seed): ls, svm, optc, comparison; the default profile stays under 150 jobs
    (a job carries enough work to be worth a process)."""
    copy_workflow(tmp_path)  # an empty folder, so that no earlier results are reused
    proc = _snakemake("-n", "--profile", f"profiles/{profile}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    # no rule is tried on a file it cannot make (results/coreg/summary.csv once matched `collect`, whose
    # input function then printed an InputFunctionException before Snakemake moved on)
    assert "Exception" not in proc.stdout + proc.stderr and "Traceback" not in proc.stdout + proc.stderr
    assert _job_count(proc.stdout, "run") == seeds * 4
    assert _job_count(proc.stdout, "dataset") == 1
    assert _job_count(proc.stdout, "report") == 1
    assert _job_count(proc.stdout, "total") <= 150


def test_parsing_sets_no_environment_and_never_exits():
    """While the Snakefile is parsed nothing is put into the environment and nothing calls sys.exit: the jobs read
    the download options from the config their script receives (mvl.workflow.jobs), the raw-data check raises a
    WorkflowError."""
    files = [ROOT / "Snakefile", *sorted((ROOT / "workflow" / "rules").glob("*.smk"))]
    for path in files:
        text = path.read_text()
        assert "os.environ" not in text and "sys.exit" not in text and "putenv" not in text, path


def _rule_blocks():
    """{rule name: its text} of every rule in workflow/rules/*.smk."""
    blocks = {}
    for path in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        for part in re.split(r"^(?=rule \w+:)", path.read_text(), flags=re.M)[1:]:
            blocks[re.match(r"rule (\w+):", part).group(1)] = part
    return blocks


def test_every_rule_runs_a_script_in_the_conda_env():
    """With --sdm conda a rule's job must run in workflow/envs/mvl.yaml: every rule names that env and runs a
    script (Snakemake executes it with the env's python), no shell line naming an interpreter."""
    blocks = _rule_blocks()
    assert {"dataset", "prepare", "run", "collect", "aggregate", "report", "coreg_run", "index"} <= set(blocks)
    for name, text in blocks.items():
        assert 'conda:\n        "../envs/mvl.yaml"' in text, name
        assert "    script:\n" in text and "    shell:" not in text, name


def test_dry_run_with_conda_deployment(tmp_path):
    """--sdm conda plans the same jobs and the one env (conda itself is a stub answering Snakemake's checks:
    no env is created here)."""
    stub = tmp_path / "bin" / "conda"
    stub.parent.mkdir()
    stub.write_text("""#!/bin/sh
case "$*" in
  --version) echo "conda 24.11.0";;
  "info --json") echo '{"conda_prefix": "/nonexistent", "platform": "linux-64"}';;
  "config --get channel_priority --json") echo '{"get": {"channel_priority": "strict"}}';;
  *) exit 1;;
esac
""")
    stub.chmod(0o755)
    wf = copy_workflow(tmp_path / "wf")
    env = dict(os.environ, PATH=f"{stub.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    plain = run_snakemake("-n", "--profile", "profiles/ci", cwd=wf)
    proc = run_snakemake("-n", "--profile", "profiles/ci", "--sdm", "conda", cwd=wf, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "Conda environment workflow/envs/mvl.yaml will be created." in out
    assert job_stats(proc.stdout) == job_stats(plain.stdout)


def test_lint_clean():
    proc = _snakemake("--lint")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Lints for" not in proc.stdout + proc.stderr


def test_config_schema_rejects_bad_config(tmp_path):
    copy_workflow(tmp_path)
    proc = _snakemake("-n", "--config", "n_val_per_class=0", cwd=tmp_path)
    assert proc.returncode != 0
    assert "n_val_per_class" in proc.stdout + proc.stderr


def test_empty_dataset_list_runs_only_coregularization(tmp_path, shared_data):
    """datasets=[] plans only the co-regularization benchmarks, and the paper profile's up-front raw-data
    check then asks only for their files (the image datasets' files are not on this machine)."""
    copy_workflow(tmp_path)
    data = f"data={{mirror: {shared_data}, offline: true, cache_dir: {tmp_path / 'cache'}}}"
    proc = _snakemake("-n", "--profile", "profiles/paper", "--config", "datasets=[]", data, cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert _job_count(proc.stdout, "coreg_run") == 5 * 10  # five SR benchmarks x 10 splits
    assert "rule run:" not in proc.stdout and "rule prepare:" not in proc.stdout
    # with the image datasets, the same offline run stops before any job and says how to leave them out
    proc = _snakemake("-n", "--profile", "profiles/paper", "--config", data, cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "no job was started" in out and "datasets=[]" in out


def test_config_and_profile_files_are_code_as_the_guide_says(tmp_path):
    """The workflow guide warns that config and profile files are code; so they are: a config file with
    ``__use_yte__: true`` runs its expressions when Snakemake loads it, and a profile's resource values are Python
    expressions, both already in a dry run."""
    guide = (ROOT / "docs" / "guide" / "workflow.md").read_text()
    assert "Config and profile files are code, not data: Snakemake evaluates them" in guide
    assert "`__use_yte__: true`" in guide and "resource values of a profile" in guide
    wf = copy_workflow(tmp_path / "wf")
    ran_config, ran_profile = tmp_path / "ran_config", tmp_path / "ran_profile"
    (wf / "config" / "yte.yaml").write_text(
        f'__use_yte__: true\nprofile: ?open(r"{ran_config}", "w").write("ran") and "yte"\n')
    (wf / "profiles" / "evaluated").mkdir()
    (wf / "profiles" / "evaluated" / "config.yaml").write_text(
        f"cores: 1\ndefault-resources:\n  - \"mem_mb=open(r'{ran_profile}', 'w').write('ran') and 1000\"\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MVL_")}
    proc = run_snakemake("-n", "--profile", "profiles/evaluated", "--configfile", "config/yte.yaml", "--config",
                         "datasets=[]", "coreg={datasets: [lines], seeds: [0]}", cwd=wf, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert ran_config.read_text() == "ran" and ran_profile.read_text() == "ran"
