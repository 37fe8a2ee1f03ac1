"""A Keras 2 script in the style of the many "binary classification with Keras and scikit-learn"
tutorials: a function that builds and compiles a small Sequential model, wrapped in
``keras.wrappers.scikit_learn.KerasClassifier(build_fn=..., epochs=..., batch_size=..., verbose=0)``
and scored with scikit-learn's ``StratifiedKFold`` / ``cross_val_score``; a ``GridSearchCV`` over
the builder's own argument. Scikit-learn's breast-cancer table stands in for the diabetes CSV."""
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

import keras
from keras.models import Sequential
from keras.layers import Dense
from keras.wrappers.scikit_learn import KerasClassifier

keras.utils.set_random_seed(10)
np.random.seed(10)

X, Y = load_breast_cancer(return_X_y=True)
X = X.astype('float32')


def create_model(units=12):
    model = Sequential()
    model.add(Dense(units, input_dim=X.shape[1], activation='relu'))
    model.add(Dense(8, activation='relu'))
    model.add(Dense(1, activation='sigmoid'))
    model.compile(loss='binary_crossentropy', optimizer='adam', metrics=['accuracy'])
    return model


estimators = [('standardize', StandardScaler()),
              ('mlp', KerasClassifier(build_fn=create_model, epochs=8, batch_size=16, verbose=0))]
pipeline = Pipeline(estimators)
kfold = StratifiedKFold(n_splits=3, shuffle=True, random_state=10)
results = cross_val_score(pipeline, X, Y, cv=kfold)
print("Standardized: %.2f%% (%.2f%%)" % (results.mean() * 100, results.std() * 100))

grid = GridSearchCV(Pipeline(estimators), param_grid={'mlp__units': [4, 12]}, cv=2)
grid.fit(X, Y)
print("Best: %f using %s" % (grid.best_score_, grid.best_params_))
print('accuracy', results.mean())
