"""A Keras 2 script in the style of the classic "addition RNN" example: questions such as "12+7"
and answers such as "19" one-hot encoded as boolean arrays by a character table, a sequence-to-
sequence model (an LSTM encoder, ``RepeatVector``, an LSTM decoder returning sequences and a
``TimeDistributed`` softmax Dense) trained in a loop of one-epoch ``fit`` calls, answers decoded
with ``predict_classes``. The last line is the share of test answers with every digit right."""
from __future__ import print_function

import numpy as np

import keras
from keras.models import Sequential
from keras import layers

keras.utils.set_random_seed(9)


class CharacterTable(object):
    """One-hot encodes strings of the given characters (padded to a fixed length) and decodes them."""

    def __init__(self, chars):
        self.chars = sorted(set(chars))
        self.char_indices = dict((c, i) for i, c in enumerate(self.chars))
        self.indices_char = dict((i, c) for i, c in enumerate(self.chars))

    def encode(self, text, num_rows):
        x = np.zeros((num_rows, len(self.chars)), dtype=bool)
        for i, c in enumerate(text):
            x[i, self.char_indices[c]] = True
        return x

    def decode(self, x, calc_argmax=True):
        if calc_argmax:
            x = x.argmax(axis=-1)
        return ''.join(self.indices_char[int(i)] for i in x)


TRAINING_SIZE = 3000
DIGITS = 2
REVERSE = True
MAXLEN = DIGITS + 1 + DIGITS  # "ab+cd"
chars = '0123456789+ '
ctable = CharacterTable(chars)

rng = np.random.default_rng(9)
questions, expected, seen = [], [], set()
while len(questions) < TRAINING_SIZE:
    a, b = (int(''.join(rng.choice(list('0123456789'), int(rng.integers(1, DIGITS + 1))))) for _ in range(2))
    if (min(a, b), max(a, b)) in seen:
        continue
    seen.add((min(a, b), max(a, b)))
    query = ('%d+%d' % (a, b)).ljust(MAXLEN)
    questions.append(query[::-1] if REVERSE else query)
    expected.append(str(a + b).ljust(DIGITS + 1))
print('Total addition questions:', len(questions))

x = np.zeros((len(questions), MAXLEN, len(chars)), dtype=bool)
y = np.zeros((len(questions), DIGITS + 1, len(chars)), dtype=bool)
for i, sentence in enumerate(questions):
    x[i] = ctable.encode(sentence, MAXLEN)
for i, sentence in enumerate(expected):
    y[i] = ctable.encode(sentence, DIGITS + 1)

split_at = len(x) - len(x) // 10
(x_train, x_val), (y_train, y_val) = (x[:split_at], x[split_at:]), (y[:split_at], y[split_at:])

HIDDEN_SIZE = 96
BATCH_SIZE = 32
model = Sequential()
model.add(layers.LSTM(HIDDEN_SIZE, input_shape=(MAXLEN, len(chars))))
model.add(layers.RepeatVector(DIGITS + 1))
model.add(layers.LSTM(HIDDEN_SIZE, return_sequences=True))
model.add(layers.TimeDistributed(layers.Dense(len(chars), activation='softmax')))
model.compile(loss='categorical_crossentropy', optimizer=keras.optimizers.Adam(learning_rate=0.01),
              metrics=['accuracy'])
model.summary()

for iteration in range(1, 9):
    model.fit(x_train, y_train, batch_size=BATCH_SIZE, epochs=1, verbose=0, validation_data=(x_val, y_val))

for i in range(3):
    row_x = x_val[np.array([i])]
    guess = ctable.decode(model.predict_classes(row_x, verbose=0)[0], calc_argmax=False)
    q = ctable.decode(row_x[0])
    print('Q', q[::-1] if REVERSE else q, 'T', ctable.decode(y_val[i]), 'guess', guess)

predicted = model.predict(x_val, verbose=0).argmax(axis=-1)
print('accuracy', np.mean((predicted == y_val.argmax(axis=-1)).all(axis=1)))
