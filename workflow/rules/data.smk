rule dataset:
    """Raw data of one dataset (embedded, downloaded and verified, read from the mirror, or a researcher's own
    files) as one npz: labels, view features or full view kernels, and the official splits where the dataset
    has them."""
    input:
        lambda w: [] if STUDY[w.dataset].data.files is None else STUDY[w.dataset].data.files.paths(),
    output:
        f"{RES}/{{dataset}}/dataset.npz",
    params:
        data=lambda w: STUDY[w.dataset].data,
    log:
        f"{RES}/{{dataset}}/logs/dataset.log",
    resources:
        mem_mb=per_attempt(1024),
        runtime=per_attempt(10),
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/dataset.py"


rule prepare:
    """Paper datasets (Flowers-17, Caltech-101, CUB-200-2011): fetch the raw files (verified; from the
    mirror, the cache or the canonical URLs) and load them once; runs draw from the loaded object."""
    output:
        f"{RES}/{{dataset}}/prepared/part{{part}}.npz",
    wildcard_constraints:
        part=r"\d+",
    params:
        data=lambda w: STUDY[w.dataset].data,
    log:
        f"{RES}/{{dataset}}/logs/prepare_part{{part}}.log",
    resources:
        mem_mb=prepare_mem_mb,
        runtime=per_attempt(30),
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/prepare.py"
