"""
Incomplete views
================

A sample may lack views. MVL-LS learns from every sample with the views it has: a missing view is a row of NaN
over that view's columns. Here a fraction q of the (sample, view) entries of the embedded digits is removed at
random, and the fit on the incomplete views is compared with mean imputation of the same model.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from mvl import MVLLeastSquares
from mvl.data.embedded import load_mfeat
from mvl.data.missing import apply_mask, mask_at_random

ds = load_mfeat()
X, sizes = np.hstack(ds.views), [V.shape[1] for V in ds.views]
idx = np.random.default_rng(0).permutation(2000)
train, test = idx[:400], idx[400:1400]
y = ds.y[train].copy()
y[50:] = -1  # 50 labelled samples, 350 unlabelled

# %%
# gamma_B > 0: the between-view term carries the labels across the views present together
fractions = [0.0, 0.2, 0.4, 0.6]
incomplete, imputed = [], []
for q in fractions:
    rng = np.random.default_rng(1)
    X_train = apply_mask(X[train], mask_at_random(len(train), 6, q, rng), sizes)
    X_test = apply_mask(X[test], mask_at_random(len(test), 6, q, rng), sizes)
    model = make_pipeline(StandardScaler(), MVLLeastSquares(views=sizes, gamma_B=1e-4))
    incomplete.append(model.fit(X_train, y).score(X_test, ds.y[test]))
    mean_imp = make_pipeline(StandardScaler(), SimpleImputer(), MVLLeastSquares(views=sizes, gamma_B=1e-4))
    imputed.append(mean_imp.fit(X_train, y).score(X_test, ds.y[test]))
    print(f"q = {q:.1f}: incomplete views {incomplete[-1]:.3f}, mean imputation {imputed[-1]:.3f}")

fig, ax = plt.subplots(figsize=(5, 3.2))
ax.plot(fractions, incomplete, "o-", label="MVL-LS on the incomplete views")
ax.plot(fractions, imputed, "s--", label="mean imputation + MVL-LS")
ax.set_xlabel("fraction q of (sample, view) entries missing")
ax.set_ylabel("test accuracy")
ax.legend()
fig.tight_layout()
