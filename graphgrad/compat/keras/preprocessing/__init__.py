"""``keras.preprocessing`` (Keras 2's module, kept in Keras 3 and ``tf.keras``): ``sequence``
(``pad_sequences``), ``text`` (``Tokenizer``, ``text_to_word_sequence``) and ``image``
(``ImageDataGenerator`` and its ``flow``)."""
from graphgrad.compat.keras.preprocessing import image, sequence, text

__all__ = ["image", "sequence", "text"]
