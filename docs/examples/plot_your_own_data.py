"""
Your own data through the estimator API
=======================================

Any set of views of the same samples works: put the views side by side in one matrix, give their sizes in
``views=``, and use the estimator like any scikit-learn classifier (pipelines, cross-validation, grid search).
Here scikit-learn's 8 x 8 digits become three views: the pixels, 2 x 2 block sums and the row and column sums.
To run a whole study with reports on your own files instead, see :doc:`/guide/own_data`.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from mvl import MVLLeastSquaresCV

digits = load_digits()
images = digits.images  # (1797, 8, 8)
views = [
    images.reshape(len(images), -1),  # 64 pixels
    images.reshape(-1, 4, 2, 4, 2).sum(axis=(2, 4)).reshape(len(images), -1),  # 16 block sums
    np.hstack([images.sum(axis=1), images.sum(axis=2)]),  # 16 row and column sums
]
X, sizes = np.hstack(views), [V.shape[1] for V in views]
X_train, X_test, y_train, y_test = train_test_split(X, digits.target, train_size=300, stratify=digits.target,
                                                    random_state=0)
y_semi = y_train.copy()
y_semi[100:] = -1  # 100 labelled, 200 unlabelled

# %%
# Select the graph and the gammas by cross-validation over the labelled samples
# -----------------------------------------------------------------------------
# ``MVLLeastSquaresCV`` keeps every unlabelled sample in every fold's graph and shares factorisations across
# the grid; a ``StandardScaler`` in front standardises each feature.
search = MVLLeastSquaresCV(views=sizes, gammas_A=(1e-5, 1e-3), gammas_W=(0.0, 1e-2), graphs=((5, 2),), cv=3)
model = make_pipeline(StandardScaler(), search).fit(X_train, y_semi)
print("selected:", {k: search.best_params_[k] for k in ("gamma_A", "gamma_W", "n_neighbors", "laplacian_power")})
print(f"test accuracy {model.score(X_test, y_test):.3f}")

# %%
# The confusion of the selected model
# -----------------------------------
from sklearn.metrics import ConfusionMatrixDisplay  # noqa: E402

fig, ax = plt.subplots(figsize=(4.5, 4))
ConfusionMatrixDisplay.from_estimator(model, X_test, y_test, ax=ax, colorbar=False)
ax.set_title("MVLLeastSquaresCV on three views of the digits")
fig.tight_layout()
