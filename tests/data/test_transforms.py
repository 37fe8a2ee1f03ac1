"""Transforms on (C, H, W) arrays and tensors: shapes, values, reproducibility."""
from __future__ import annotations

import numpy as np
import pytest

import graphgrad as gg
from graphgrad.data.transforms import (Compose, Lambda, Normalize, RandomCrop, RandomHorizontalFlip,
                                       RandomVerticalFlip, ToTensor)


def _img(c=3, h=4, w=5):
    return np.arange(c * h * w, dtype=np.float32).reshape(c, h, w)


def test_to_tensor():
    u8 = np.full((2, 3), 255, np.uint8)
    t = ToTensor()(u8)
    assert isinstance(t, gg.Tensor) and t.shape == (1, 2, 3) and t.dtype == np.float32
    np.testing.assert_array_equal(t.numpy(), 1.0)
    hwc = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    chw = ToTensor(layout="hwc")(hwc)
    np.testing.assert_allclose(chw.numpy(), hwc.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    assert ToTensor()(np.zeros((1, 2, 2), np.float64)).dtype == np.float64
    assert ToTensor()(np.zeros((1, 2, 2), np.int32)).dtype == np.float32
    with pytest.raises(ValueError):
        ToTensor(layout="nhwc")


def test_to_tensor_pil():
    Image = pytest.importorskip("PIL.Image")
    pic = Image.fromarray(np.arange(24, dtype=np.uint8).reshape(2, 4, 3))
    assert ToTensor()(pic).shape == (3, 2, 4)


def test_normalize_array_and_tensor():
    img = _img()
    mean, std = [1.0, 2.0, 3.0], [2.0, 4.0, 0.5]
    out = Normalize(mean, std)(img)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    expect = (img - np.array(mean, np.float32)[:, None, None]) / np.array(std, np.float32)[:, None, None]
    np.testing.assert_allclose(out, expect, rtol=1e-6)
    t = Normalize(mean, std)(gg.tensor(img))
    assert isinstance(t, gg.Tensor)
    np.testing.assert_allclose(t.numpy(), expect, rtol=1e-6)
    batch = Normalize(0.5, 0.5)(np.ones((2, 3, 2, 2), np.float64))
    assert batch.dtype == np.float64 and np.all(batch == 1.0)
    with pytest.raises(ValueError, match="channels"):
        Normalize([0, 0], [1, 1])(img)
    with pytest.raises(ValueError, match="zeros"):
        Normalize([0], [0])
    with pytest.raises(ValueError, match=r"\(C, H, W\)"):
        Normalize(0, 1)(np.zeros((4, 4)))


def test_random_crop_shapes_values_and_reproducibility():
    img = _img(3, 8, 8)
    crop = RandomCrop(5, generator=gg.Generator(0))
    out = crop(img)
    assert out.shape == (3, 5, 5)
    # the crop is a contiguous window of the image
    found = [(i, j) for i in range(4) for j in range(4) if np.array_equal(img[:, i:i + 5, j:j + 5], out)]
    assert len(found) == 1
    a = [RandomCrop(5, generator=gg.Generator(1))(img) for _ in range(2)]
    np.testing.assert_array_equal(a[0], a[1])
    seq = RandomCrop(5, generator=gg.Generator(2))
    outs = [seq(img) for _ in range(10)]
    assert any(not np.array_equal(outs[0], o) for o in outs[1:])


def test_random_crop_padding():
    img = np.ones((1, 4, 4), np.float32)
    padded = RandomCrop(8, padding=2, fill=0)(img)
    assert padded.shape == (1, 8, 8) and padded.sum() == 16
    t = RandomCrop((4, 6), padding=(1, 0), generator=gg.Generator(0))(gg.tensor(img))
    assert isinstance(t, gg.Tensor) and t.shape == (1, 4, 6)
    edge = RandomCrop(6, padding=1, padding_mode="edge")(img)
    assert np.all(edge == 1)
    assert RandomCrop(6, pad_if_needed=True)(img).shape == (1, 6, 6)
    assert RandomCrop(3)(np.zeros((2, 3, 5, 5))).shape == (2, 3, 3, 3)
    with pytest.raises(ValueError, match="larger"):
        RandomCrop(6)(img)
    with pytest.raises(ValueError):
        RandomCrop(2, padding=(1, 2, 3))
    with pytest.raises(ValueError):
        RandomCrop(2, padding_mode="wrap")


def test_flips():
    img = _img()
    np.testing.assert_array_equal(RandomHorizontalFlip(p=1.0)(img), img[:, :, ::-1])
    np.testing.assert_array_equal(RandomHorizontalFlip(p=0.0)(img), img)
    np.testing.assert_array_equal(RandomVerticalFlip(p=1.0)(img), img[:, ::-1, :])
    t = RandomHorizontalFlip(p=1.0)(gg.tensor(img))
    assert isinstance(t, gg.Tensor)
    np.testing.assert_array_equal(t.numpy(), img[:, :, ::-1])
    flip = RandomHorizontalFlip(p=0.5, generator=gg.Generator(0))
    flipped = [not np.array_equal(flip(img), img) for _ in range(200)]
    assert 60 < sum(flipped) < 140
    with pytest.raises(ValueError):
        RandomHorizontalFlip(p=2)


def test_compose_lambda_and_global_seed():
    pipeline = Compose([ToTensor(), RandomCrop(3, padding=1), RandomHorizontalFlip(),
                        Normalize([0.5], [0.5]), Lambda(lambda t: t * 2)])
    img = np.random.default_rng(0).integers(0, 256, size=(1, 4, 4), dtype=np.uint8)
    gg.manual_seed(7)
    a = pipeline(img)
    gg.manual_seed(7)
    b = pipeline(img)
    assert isinstance(a, gg.Tensor) and a.shape == (1, 3, 3)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert "RandomCrop" in repr(pipeline) and "Lambda" in repr(pipeline)
    with pytest.raises(TypeError):
        Lambda(3)
