"""The paper profile end to end on format-faithful fixtures: downloads over a local HTTP server.

Fixtures in the exact real formats (tests/paper_fixtures.py) are served on 127.0.0.1; the real
Flowers-17 ``datasplits.mat`` comes from the mirror (../shared/data), so the official splits are the
real ones and the distance matrices are fixtures of the real size (1360 images). The workflow runs the
paper profile with tiny sizes (config/paper_tiny.yaml) and renders every dataset's report, with the
published numbers beside ours. Also: offline without the files, it stops before any job with one
message naming the files, their URLs and the mirror option.
"""

from __future__ import annotations

import json
import os
import shutil

import paper_fixtures as pf
import pandas as pd
import pytest
from conftest import ROOT, copy_workflow, run_snakemake

SHARED = ROOT.parent / "shared" / "data"


def _snakemake(cwd, *args, timeout=1500):
    env = dict(os.environ, MPLBACKEND="Agg")
    for k in ("MVL_DATA_MIRROR", "MVL_DATA_CACHE", "MVL_OFFLINE"):
        env.pop(k, None)
    return run_snakemake(*args, cwd=cwd, timeout=timeout, env=env)


def _data_arg(data):
    return "data=" + json.dumps(data).replace('"', "")  # --config parses a YAML-like mapping


@pytest.mark.slow
def test_paper_profile_end_to_end_on_fixtures(tmp_path):
    real_splits = SHARED / "flowers17" / "datasplits.mat"
    assert real_splits.is_file(), f"the real Flowers-17 splits {real_splits} (../shared/data) are required"
    wf = tmp_path / "wf"
    wf.mkdir()
    copy_workflow(wf)
    served = tmp_path / "served"
    pf.write_flowers17(served, n_per_class=80)       # 1360 images, as the real distance matrices
    pf.write_caltech101(served, n_classes=3)          # 3 classes, the 3 splits, 10 kernels each
    cub = pf.write_cub(served)                        # 4 classes
    mirror = tmp_path / "mirror" / "flowers17"
    mirror.mkdir(parents=True)
    shutil.copy(real_splits, mirror / "datasplits.mat")  # official splits: the real file
    data = {"cache_dir": str(tmp_path / "cache"), "mirror": str(mirror.parent), "offline": False,
            "checksums": dict(cub.checksums), "retries": 0}  # the fixture archive and its members
    with pf.serve_directory(served) as server:
        data["base_url"] = server.url
        proc = _snakemake(wf, "--profile", "profiles/paper", "--configfile", "config/paper.yaml",
                          "config/paper_tiny.yaml", "--config", _data_arg(data))
        requested = list(server.log)
    assert proc.returncode == 0, proc.stderr[-4000:] + proc.stdout[-2000:]
    assert "flowers17/datasplits.mat" not in requested  # read from the mirror, not downloaded
    assert "flowers17/distancematrices17itfeat08.mat" in requested
    res_dir = wf / "results"
    for ds in ("mfeat", "flowers17", "caltech101_v4", "caltech101_v10", "cub"):
        assert (res_dir / ds / "report.ipynb").stat().st_size > 0, ds
        assert (res_dir / ds / "figures" / "accuracy_vs_labels.png").stat().st_size > 0, ds
    # Flowers-17 used the official split 1 of the real file: test = tst1 (340 images)
    flowers = pd.read_csv(res_dir / "flowers17" / "results.csv")
    assert set(flowers["split"]) == {1} and flowers["accuracy"].between(0, 1).all()
    from mvl.data.paper import load_flowers17_splits

    tst1 = load_flowers17_splits(real_splits).splits[1]["tst"]
    n_test = flowers.loc[flowers.method == "mvl_ls", "accuracy"] * len(tst1)  # accuracies are k / 340
    assert len(tst1) == 340 and ((n_test - n_test.round()).abs() < 1e-6).all()
    caltech = pd.read_csv(res_dir / "caltech101_v10" / "results.csv")
    assert set(caltech["n_views"]) >= {10, 1}
    report = (res_dir / "flowers17" / "report.ipynb").read_text()
    assert "Published numbers" in report and "39.41" in report  # Table 6 beside ours
    assert (res_dir / "flowers17" / "report.html").stat().st_size > 0
    from mvl.workflow.index import check_links

    assert check_links(res_dir / "index.html") == []
    # the second run has nothing to do (every output is complete and trusted)
    with pf.serve_directory(served) as server:
        data["base_url"] = server.url
        again = _snakemake(wf, "--profile", "profiles/paper", "--configfile", "config/paper.yaml",
                           "config/paper_tiny.yaml", "--config", _data_arg(data), "-n")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr


def test_paper_profile_offline_without_files_stops_before_any_job(tmp_path):
    wf = tmp_path / "wf"
    wf.mkdir()
    copy_workflow(wf)
    data = {"cache_dir": str(tmp_path / "cache"), "mirror": None, "offline": True}
    proc = _snakemake(wf, "--profile", "profiles/paper", "--config", _data_arg(data), timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "no job was started" in out and "Traceback" not in out
    assert "flowers17/distancematrices17itfeat08.mat" in out
    assert "https://www.robots.ox.ac.uk/~vgg/data/flowers/17/distancematrices17itfeat08.mat" in out
    assert "mirror" in out
    assert not (wf / "results").exists()
