"""``keras.layers``: Keras' layers (channels_last), built lazily from their first input."""
from graphgrad.compat.keras.engine import Input, InputLayer, Layer
from graphgrad.compat.keras.layers_core import (Activation, AveragePooling1D, AveragePooling2D, BatchNormalization,
                                                Conv1D, Conv2D, Dense, Dropout, Embedding, Flatten,
                                                GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalMaxPooling1D,
                                                GlobalMaxPooling2D, Lambda, LayerNormalization, MaxPooling1D,
                                                MaxPooling2D, Permute, Rescaling, Reshape)
from graphgrad.compat.keras.layers_more import (ELU, Conv2DTranspose, LeakyReLU, Normalization, ReLU, Softmax,
                                                UpSampling2D, ZeroPadding2D)
from graphgrad.compat.keras.layers_attention import (Attention, Conv3D, DepthwiseConv2D, Dot, MultiHeadAttention,
                                                     RepeatVector, SeparableConv2D, TimeDistributed)
from graphgrad.compat.keras.layers_prep import (ActivityRegularization, CategoryEncoding, CenterCrop, Cropping1D,
                                                Cropping2D, Discretization, GaussianDropout, GaussianNoise,
                                                GroupNormalization, Identity, Masking, PReLU, RandomFlip, RandomRotation,
                                                Resizing, SpatialDropout1D, SpatialDropout2D, UnitNormalization,
                                                UpSampling1D, ZeroPadding1D)
from graphgrad.compat.keras.layers_text import TextVectorization
from graphgrad.compat.keras.layers_convrnn import ConvLSTM2D
from graphgrad.compat.keras.layers_rnn import (GRU, LSTM, Add, Bidirectional, Average, Concatenate, Maximum, Multiply, SimpleRNN,
                                               Subtract, add, average, concatenate, maximum, multiply, subtract)

MaxPool1D, MaxPool2D, AvgPool1D, AvgPool2D = MaxPooling1D, MaxPooling2D, AveragePooling1D, AveragePooling2D
GlobalAvgPool1D, GlobalAvgPool2D = GlobalAveragePooling1D, GlobalAveragePooling2D
GlobalMaxPool1D, GlobalMaxPool2D = GlobalMaxPooling1D, GlobalMaxPooling2D
Convolution1D, Convolution2D, Convolution2DTranspose = Conv1D, Conv2D, Conv2DTranspose
Convolution3D, SeparableConvolution2D = Conv3D, SeparableConv2D

__all__ = ["Input", "InputLayer", "Layer", "Activation", "AveragePooling1D", "AveragePooling2D", "BatchNormalization",
           "Conv1D", "Conv2D", "Dense", "Dropout", "Embedding", "Flatten", "GlobalAveragePooling1D",
           "GlobalAveragePooling2D", "GlobalMaxPooling1D", "GlobalMaxPooling2D", "LayerNormalization", "MaxPooling1D",
           "MaxPooling2D", "Permute", "Reshape", "Rescaling", "Lambda", "GRU", "LSTM", "SimpleRNN", "Bidirectional", "Add", "Average", "Concatenate", "Maximum",
           "Multiply", "Subtract", "add", "average", "concatenate", "maximum", "multiply", "subtract", "MaxPool1D",
           "MaxPool2D", "AvgPool1D", "AvgPool2D", "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalMaxPool1D",
           "GlobalMaxPool2D", "Convolution1D", "Convolution2D", "Convolution2DTranspose", "ELU", "Conv2DTranspose",
           "LeakyReLU", "Normalization", "ReLU", "Softmax", "UpSampling2D", "ZeroPadding2D",
           "MultiHeadAttention", "Attention", "TimeDistributed", "RepeatVector", "Dot", "DepthwiseConv2D",
           "SeparableConv2D", "Conv3D", "Convolution3D", "SeparableConvolution2D", "Cropping1D", "Cropping2D",
           "UpSampling1D", "ZeroPadding1D", "GaussianNoise", "GaussianDropout", "SpatialDropout1D", "SpatialDropout2D",
           "PReLU", "Identity", "UnitNormalization", "GroupNormalization", "ActivityRegularization", "Resizing",
           "CenterCrop", "RandomFlip", "RandomRotation", "CategoryEncoding", "Discretization", "Masking",
           "TextVectorization", "ConvLSTM2D"]
