"""A Keras 2 script in the style of the classic "CNN on CIFAR-10" example: a Conv2D/MaxPooling2D
Sequential model trained on batches that ``keras.preprocessing.image.ImageDataGenerator`` augments
(small shifts and rotations) and standardizes, through ``fit_generator(datagen.flow(...),
steps_per_epoch=...)`` with ``ReduceLROnPlateau`` and a ``ModelCheckpoint`` to an ``.h5`` name;
the saved model is loaded back and evaluated. scikit-learn's 8x8 digits stand in for the images."""
from __future__ import print_function

import os

from sklearn.datasets import load_digits

import keras
from keras.preprocessing.image import ImageDataGenerator
from keras.models import Sequential, load_model
from keras.layers import Dense, Dropout, Activation, Flatten
from keras.layers import Conv2D, MaxPooling2D
from keras.callbacks import ModelCheckpoint, ReduceLROnPlateau

keras.utils.set_random_seed(7)

batch_size = 32
num_classes = 10
epochs = 4
save_dir = os.path.join(os.getcwd(), 'saved_models')
model_name = 'keras_digits_trained_model.h5'

digits = load_digits()
x = digits.images.reshape(-1, 8, 8, 1).astype('float32') * 16  # 0..255, as images come
y = keras.utils.to_categorical(digits.target, num_classes)
x_train, y_train, x_test, y_test = x[:1400], y[:1400], x[1400:], y[1400:]
print('x_train shape:', x_train.shape)

model = Sequential()
model.add(Conv2D(32, (3, 3), padding='same', input_shape=x_train.shape[1:]))
model.add(Activation('relu'))
model.add(Conv2D(32, (3, 3)))
model.add(Activation('relu'))
model.add(MaxPooling2D(pool_size=(2, 2)))
model.add(Dropout(0.25))
model.add(Flatten())
model.add(Dense(128))
model.add(Activation('relu'))
model.add(Dropout(0.5))
model.add(Dense(num_classes))
model.add(Activation('softmax'))

model.compile(loss='categorical_crossentropy', optimizer=keras.optimizers.Adam(learning_rate=2e-3),
              metrics=['accuracy'])

datagen = ImageDataGenerator(
    featurewise_center=True,
    featurewise_std_normalization=True,
    rotation_range=8,
    width_shift_range=0.1,
    height_shift_range=0.1,
    fill_mode='nearest')
datagen.fit(x_train)

if not os.path.isdir(save_dir):
    os.makedirs(save_dir)
model_path = os.path.join(save_dir, model_name)
callbacks = [ModelCheckpoint(model_path, monitor='val_accuracy', save_best_only=True),
             ReduceLROnPlateau(monitor='val_loss', factor=0.5, patience=1)]
model.fit_generator(datagen.flow(x_train, y_train, batch_size=batch_size),
                    steps_per_epoch=len(x_train) // batch_size,
                    epochs=epochs,
                    validation_data=datagen.flow(x_test, y_test, batch_size=batch_size),
                    callbacks=callbacks,
                    workers=4)
print('Saved trained model at %s ' % model_path)

best = load_model(model_path)
scores = best.evaluate(datagen.standardize(x_test.copy()), y_test, verbose=0)
print('Test loss:', scores[0])
print('accuracy', scores[1])
