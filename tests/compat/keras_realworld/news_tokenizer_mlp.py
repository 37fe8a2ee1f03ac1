"""A Keras 2 script in the style of the classic "MLP on Reuters newswires" example: texts turned into
binary bag-of-words rows by ``keras.preprocessing.text.Tokenizer`` (``fit_on_texts``,
``texts_to_sequences``, ``sequences_to_matrix``), labels one-hot by ``keras.utils.to_categorical``,
and a Dense/Dropout MLP. The newswires are generated from four topics' vocabularies."""
from __future__ import print_function

import numpy as np

import keras
from keras.models import Sequential
from keras.layers import Dense, Dropout, Activation
from keras.preprocessing.text import Tokenizer

keras.utils.set_random_seed(6)
rng = np.random.default_rng(6)

topics = {
    0: "oil barrel crude opec refinery pipeline output",
    1: "wheat grain corn harvest tonnes farmers crop",
    2: "shares stock profit dividend quarter earnings investors",
    3: "rate bank interest inflation central currency policy",
}
filler = "the a of said in to and for on it was its will by at from year".split()


def newswire(topic):
    words = list(rng.choice(filler, rng.integers(8, 20))) + list(rng.choice(topics[topic].split(), 3))
    rng.shuffle(words)
    return " ".join(words).capitalize() + "."


labels = rng.integers(0, 4, 1000)
texts = [newswire(t) for t in labels]
max_words = 60
batch_size = 32
epochs = 4

tokenizer = Tokenizer(num_words=max_words)
tokenizer.fit_on_texts(texts[:800])
sequences = tokenizer.texts_to_sequences(texts)
print(len(tokenizer.word_index), 'distinct words')
x = tokenizer.sequences_to_matrix(sequences, mode='binary')
num_classes = int(np.max(labels)) + 1
y = keras.utils.to_categorical(labels, num_classes)
x_train, y_train, x_test, y_test = x[:800], y[:800], x[800:], y[800:]
print('x_train shape:', x_train.shape)

model = Sequential()
model.add(Dense(128, input_shape=(max_words,)))
model.add(Activation('relu'))
model.add(Dropout(0.5))
model.add(Dense(num_classes))
model.add(Activation('softmax'))

model.compile(loss='categorical_crossentropy', optimizer='adam', metrics=['accuracy'])
history = model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, verbose=0, validation_split=0.1)
score = model.evaluate(x_test, y_test, batch_size=batch_size, verbose=0)
print('Test score:', score[0])
print('accuracy', score[1])
