"""``keras.preprocessing.image``: Keras 2's ``ImageDataGenerator`` for channels_last arrays: ``fit``
(feature-wise statistics, ZCA), ``flow(x, y, batch_size)`` (an iterator of augmented batches that
``fit`` / ``evaluate`` / ``predict`` accept, and ``next()`` too), ``random_transform`` /
``apply_transform`` / ``standardize``. The affine augmentations (rotation, shifts, shear, zoom) sample
bilinearly with Keras' fill modes (``nearest``, ``constant``, ``reflect``, ``wrap``). ``load_img`` /
``array_to_img`` / ``save_img`` use Pillow (graphgrad's ``images`` extra), as Keras uses PIL."""
from __future__ import annotations

from typing import Any, Optional

from graphgrad.backend import np
from graphgrad.compat.keras.utils import PyDataset

__all__ = ["ImageDataGenerator", "NumpyArrayIterator", "img_to_array", "array_to_img", "load_img", "save_img",
           "apply_affine_transform"]


def _pil():
    try:
        from PIL import Image
    except ImportError:  # Pillow is graphgrad's optional "images" extra, as PIL is Keras' for these functions
        return None
    return Image


def _host(x: Any) -> Any:
    return x.numpy() if hasattr(x, "numpy") and not isinstance(x, np.ndarray) else x


def img_to_array(img: Any, data_format: Optional[str] = None, dtype: Optional[str] = None) -> Any:
    """An image (a PIL image or an array) as a float array ``(height, width, channels)``."""
    x = np.asarray(_host(img), dtype=dtype or "float32")
    if x.ndim == 3:
        return x.transpose(2, 0, 1) if data_format == "channels_first" else x
    if x.ndim == 2:
        return x[None] if data_format == "channels_first" else x[:, :, None]
    raise ValueError(f"Unsupported image shape: {x.shape}")


def array_to_img(x: Any, data_format: Optional[str] = None, scale: bool = True, dtype: Optional[str] = None) -> Any:
    """A PIL image of a rank-3 array (RGB, RGBA or grayscale), values rescaled to 0..255 when ``scale``,
    as Keras (needs Pillow, as Keras needs PIL)."""
    image = _pil()
    if image is None:
        raise ImportError("Could not import PIL.Image. The use of `array_to_img` requires PIL.")
    x = np.array(_host(x), dtype=dtype or "float32")
    if x.ndim != 3:
        raise ValueError(f"Expected image array to have rank 3 (single image). Got array with shape: {x.shape}")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        top = np.max(x)
        if top != 0:
            x /= top
        x *= 255
    if x.shape[2] == 4:
        return image.fromarray(x.astype("uint8"), "RGBA")
    if x.shape[2] == 3:
        return image.fromarray(x.astype("uint8"), "RGB")
    if x.shape[2] == 1:
        if np.max(x) > 255:
            return image.fromarray(x[:, :, 0].astype("int32"), "I")
        return image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {x.shape[2]}")


def save_img(path: Any, x: Any, data_format: Optional[str] = None, file_format: Optional[str] = None,
             scale: bool = True, **kwargs) -> None:
    """Write an array as an image file (``array_to_img`` then PIL's ``save``)."""
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and (file_format == "jpg" or file_format == "jpeg"):
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)


def load_img(path: Any, color_mode: str = "rgb", target_size: Any = None, interpolation: str = "nearest",
             keep_aspect_ratio: bool = False, **kwargs) -> Any:
    """A PIL image read from ``path`` in ``color_mode`` (``"grayscale"``, ``"rgb"``, ``"rgba"``), resized to
    ``target_size=(height, width)`` when given (needs Pillow)."""
    image = _pil()
    if image is None:
        raise ImportError("Could not import PIL.Image. The use of `load_img` requires PIL.")
    img = image.open(path)
    modes = {"grayscale": "L", "rgb": "RGB", "rgba": "RGBA"}
    if color_mode not in modes:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    if img.mode != modes[color_mode]:
        img = img.convert(modes[color_mode])
    if target_size is not None:
        size = (int(target_size[1]), int(target_size[0]))
        if img.size != size:
            methods = {"nearest": image.NEAREST, "bilinear": image.BILINEAR, "bicubic": image.BICUBIC,
                       "lanczos": image.LANCZOS, "box": image.BOX, "hamming": image.HAMMING}
            img = img.resize(size, methods.get(interpolation, image.NEAREST))
    return img


def _fill_coordinates(coords: Any, size: int, mode: str) -> tuple:
    """Integer source indices for ``coords`` and a mask of those inside (``constant`` fills the rest)."""
    inside = (coords >= 0) & (coords <= size - 1)
    if mode == "nearest":
        return np.clip(coords, 0, size - 1), np.ones_like(inside)
    if mode == "wrap":
        return np.mod(coords, size), np.ones_like(inside)
    if mode == "reflect":  # scipy's "reflect": d c b a | a b c d | d c b a
        period = 2 * size
        c = np.mod(coords, period)
        return np.where(c >= size, period - 1 - c, c), np.ones_like(inside)
    if mode == "constant":
        return np.clip(coords, 0, size - 1), inside
    raise ValueError(f"fill_mode must be nearest, constant, reflect or wrap, got {mode!r}")


def _affine(x: Any, matrices: Any, fill_mode: str, cval: float, order: int = 1) -> Any:
    """``out[b, r, c] = x[b, M_b @ (r, c, 1)]`` for a batch of images ``(b, rows, cols, channels)`` and
    matrices ``(b, 3, 3)``: bilinear (``order=1``) or nearest (``order=0``) sampling."""
    b, h, w = x.shape[:3]
    rr, cc = np.meshgrid(np.arange(h, dtype=np.float64), np.arange(w, dtype=np.float64), indexing="ij")
    m = matrices[:, :2, :, None, None]
    src_r = m[:, 0, 0] * rr + m[:, 0, 1] * cc + m[:, 0, 2]
    src_c = m[:, 1, 0] * rr + m[:, 1, 1] * cc + m[:, 1, 2]
    batch = np.arange(b)[:, None, None]
    if order == 0:
        r, r_ok = _fill_coordinates(np.rint(src_r).astype(np.int64), h, fill_mode)
        c, c_ok = _fill_coordinates(np.rint(src_c).astype(np.int64), w, fill_mode)
        return np.where((r_ok & c_ok)[..., None], x[batch, r, c].astype(np.float64), cval)
    r0, c0 = np.floor(src_r), np.floor(src_c)
    fr, fc = (src_r - r0)[..., None], (src_c - c0)[..., None]
    out = 0.0
    for dr, wr in ((0, 1 - fr), (1, fr)):
        for dc, wc in ((0, 1 - fc), (1, fc)):
            r, r_ok = _fill_coordinates((r0 + dr).astype(np.int64), h, fill_mode)
            c, c_ok = _fill_coordinates((c0 + dc).astype(np.int64), w, fill_mode)
            out = out + wr * wc * np.where((r_ok & c_ok)[..., None], x[batch, r, c], cval)
    return out


def _transform_matrix(theta: float, tx: float, ty: float, shear: float, zx: float, zy: float, h: int,
                      w: int) -> Any:
    """Keras' affine matrix (degrees; ``tx`` rows, ``ty`` columns) about the image center, or None
    for the identity."""
    matrix = np.eye(3)
    if theta:
        t = np.deg2rad(theta)
        matrix = matrix @ np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0], [0, 0, 1]])
    if tx or ty:
        matrix = matrix @ np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]])
    if shear:
        s = np.deg2rad(shear)
        matrix = matrix @ np.array([[1, -np.sin(s), 0], [0, np.cos(s), 0], [0, 0, 1]])
    if zx != 1 or zy != 1:
        matrix = matrix @ np.array([[zx, 0, 0], [0, zy, 0], [0, 0, 1]])
    if np.allclose(matrix, np.eye(3)):
        return None
    ox, oy = h / 2.0 - 0.5, w / 2.0 - 0.5
    offset = np.array([[1, 0, ox], [0, 1, oy], [0, 0, 1]])
    reset = np.array([[1, 0, -ox], [0, 1, -oy], [0, 0, 1]])
    return offset @ matrix @ reset


def apply_affine_transform(x: Any, theta: float = 0, tx: float = 0, ty: float = 0, shear: float = 0, zx: float = 1,
                           zy: float = 1, row_axis: int = 0, col_axis: int = 1, channel_axis: int = 2,
                           fill_mode: str = "nearest", cval: float = 0.0, order: int = 1) -> Any:
    """Keras' ``apply_affine_transform`` (degrees; ``tx`` rows, ``ty`` columns) for one image, channels last."""
    if (row_axis, col_axis, channel_axis) != (0, 1, 2):
        raise NotImplementedError("apply_affine_transform: images are (rows, cols, channels) here")
    x = np.asarray(x)
    matrix = _transform_matrix(theta, tx, ty, shear, zx, zy, x.shape[0], x.shape[1])
    if matrix is None:
        return x
    return _affine(x[None], matrix[None], fill_mode, cval, order)[0].astype(x.dtype)


def _uniform(rng: Any, spread: Any, center: float = 0.0) -> float:
    return float(rng.uniform(center - spread, center + spread)) if spread else center


class ImageDataGenerator:
    """Keras 2's ``ImageDataGenerator`` (channels_last arrays of shape ``(n, rows, cols, channels)``)."""

    def __init__(self, featurewise_center: bool = False, samplewise_center: bool = False,
                 featurewise_std_normalization: bool = False, samplewise_std_normalization: bool = False,
                 zca_whitening: bool = False, zca_epsilon: float = 1e-6, rotation_range: float = 0,
                 width_shift_range: Any = 0.0, height_shift_range: Any = 0.0, brightness_range: Any = None,
                 shear_range: float = 0.0, zoom_range: Any = 0.0, channel_shift_range: float = 0.0,
                 fill_mode: str = "nearest", cval: float = 0.0, horizontal_flip: bool = False,
                 vertical_flip: bool = False, rescale: Optional[float] = None, preprocessing_function: Any = None,
                 data_format: Optional[str] = None, validation_split: float = 0.0, interpolation_order: int = 1,
                 dtype: Optional[str] = None) -> None:
        if data_format not in (None, "channels_last"):
            raise NotImplementedError("ImageDataGenerator: graphgrad.compat.keras is channels_last only")
        _fill_coordinates(np.zeros(1), 1, fill_mode)  # validate the mode now
        self.featurewise_center, self.samplewise_center = featurewise_center, samplewise_center
        self.featurewise_std_normalization = featurewise_std_normalization
        self.samplewise_std_normalization = samplewise_std_normalization
        self.zca_whitening, self.zca_epsilon = zca_whitening, zca_epsilon
        self.rotation_range, self.shear_range = rotation_range, shear_range
        self.width_shift_range, self.height_shift_range = width_shift_range, height_shift_range
        self.brightness_range, self.channel_shift_range = brightness_range, channel_shift_range
        if isinstance(zoom_range, (int, float)):
            zoom_range = (1 - zoom_range, 1 + zoom_range)
        self.zoom_range = tuple(zoom_range)
        self.fill_mode, self.cval = fill_mode, cval
        self.horizontal_flip, self.vertical_flip = horizontal_flip, vertical_flip
        self.rescale, self.preprocessing_function = rescale, preprocessing_function
        self.validation_split, self.interpolation_order = float(validation_split), int(interpolation_order)
        self.dtype = dtype or "float32"
        self.mean = self.std = self.principal_components = None
        self._rng = np.random.default_rng()

    # ---- statistics ------------------------------------------------------------------------------------------
    def fit(self, x: Any, augment: bool = False, rounds: int = 1, seed: Optional[int] = None) -> None:
        """The per-channel mean and std (and the ZCA matrix) of ``x``, for the feature-wise options."""
        x = np.asarray(x, dtype=self.dtype)
        if x.ndim != 4:
            raise ValueError(f"ImageDataGenerator.fit: expected (n, rows, cols, channels), got shape {x.shape}")
        if augment:
            rng = np.random.default_rng(seed)
            x = np.concatenate([np.stack([self.random_transform(img, rng=rng) for img in x]) for _ in range(rounds)])
        if self.featurewise_center:
            self.mean = x.mean(axis=(0, 1, 2), keepdims=True)[0]
            x = x - self.mean
        if self.featurewise_std_normalization:
            self.std = x.std(axis=(0, 1, 2), keepdims=True)[0]
            x = x / (self.std + 1e-6)
        if self.zca_whitening:
            flat = x.reshape(len(x), -1)
            sigma = flat.T @ flat / flat.shape[0]
            u, s, _ = np.linalg.svd(sigma)
            self.principal_components = (u * (1.0 / np.sqrt(s[None, :] + self.zca_epsilon))) @ u.T

    def standardize(self, x: Any) -> Any:
        """The normalizations (``preprocessing_function``, ``rescale``, sample- and feature-wise, ZCA)."""
        x = np.asarray(x, dtype=self.dtype)
        if self.preprocessing_function is not None:
            x = self.preprocessing_function(x)
        if self.rescale:
            x = x * self.rescale
        image_axes = tuple(range(x.ndim - 3, x.ndim))  # one image, or each of a batch
        if self.samplewise_center:
            x = x - np.mean(x, axis=image_axes, keepdims=True)
        if self.samplewise_std_normalization:
            x = x / (np.std(x, axis=image_axes, keepdims=True) + 1e-6)
        if self.featurewise_center:
            if self.mean is None:
                raise ValueError("ImageDataGenerator: featurewise_center needs fit(x) first")
            x = x - self.mean
        if self.featurewise_std_normalization:
            if self.std is None:
                raise ValueError("ImageDataGenerator: featurewise_std_normalization needs fit(x) first")
            x = x / (self.std + 1e-6)
        if self.zca_whitening:
            if self.principal_components is None:
                raise ValueError("ImageDataGenerator: zca_whitening needs fit(x) first")
            x = (x.reshape(-1, np.prod(x.shape[-3:])) @ self.principal_components).reshape(x.shape)
        return x.astype(self.dtype)

    # ---- augmentation ----------------------------------------------------------------------------------------
    def _shift(self, spread: Any, size: int, rng: Any) -> float:
        if isinstance(spread, (list, tuple, np.ndarray)):
            return float(rng.choice(spread))
        value = _uniform(rng, spread)
        return value * size if 0 < abs(spread) < 1 else value

    def get_random_transform(self, img_shape: tuple, seed: Optional[int] = None, rng: Any = None) -> dict:
        rng = rng if rng is not None else (np.random.default_rng(seed) if seed is not None else self._rng)
        zx, zy = (1.0, 1.0) if self.zoom_range == (1, 1) else tuple(rng.uniform(*self.zoom_range, 2))
        return {"theta": _uniform(rng, self.rotation_range),
                "tx": self._shift(self.height_shift_range, img_shape[0], rng),
                "ty": self._shift(self.width_shift_range, img_shape[1], rng),
                "shear": _uniform(rng, self.shear_range), "zx": float(zx), "zy": float(zy),
                "flip_horizontal": bool(self.horizontal_flip and rng.random() < 0.5),
                "flip_vertical": bool(self.vertical_flip and rng.random() < 0.5),
                "channel_shift_intensity": _uniform(rng, self.channel_shift_range) if self.channel_shift_range else None,
                "brightness": float(rng.uniform(*self.brightness_range)) if self.brightness_range else None}

    def apply_transform(self, x: Any, transform_parameters: dict) -> Any:
        p = transform_parameters
        x = apply_affine_transform(x, p.get("theta", 0), p.get("tx", 0), p.get("ty", 0), p.get("shear", 0),
                                   p.get("zx", 1), p.get("zy", 1), fill_mode=self.fill_mode, cval=self.cval,
                                   order=self.interpolation_order)
        if p.get("channel_shift_intensity") is not None:
            lo, hi = np.min(x), np.max(x)
            x = np.clip(x + p["channel_shift_intensity"], lo, hi)
        if p.get("flip_horizontal"):
            x = x[:, ::-1]
        if p.get("flip_vertical"):
            x = x[::-1]
        if p.get("brightness") is not None:
            x = np.clip(x * p["brightness"], 0, 255)
        return x

    def random_transform(self, x: Any, seed: Optional[int] = None, rng: Any = None) -> Any:
        return self.apply_transform(x, self.get_random_transform(np.shape(x), seed, rng))

    # ---- iterators -------------------------------------------------------------------------------------------
    def flow(self, x: Any, y: Any = None, batch_size: int = 32, shuffle: bool = True, sample_weight: Any = None,
             seed: Optional[int] = None, save_to_dir: Any = None, save_prefix: str = "", save_format: str = "png",
             ignore_class_split: bool = False, subset: Optional[str] = None) -> "NumpyArrayIterator":
        if sample_weight is not None:
            raise NotImplementedError("ImageDataGenerator.flow: sample_weight is not supported")
        if save_to_dir is not None:
            raise NotImplementedError("ImageDataGenerator.flow: save_to_dir needs an image library")
        return NumpyArrayIterator(x, y, self, batch_size=batch_size, shuffle=shuffle, seed=seed, subset=subset)

    def flow_from_directory(self, directory: str, *args, **kwargs):
        raise NotImplementedError("flow_from_directory: graphgrad.compat.keras reads no image files; load the images "
                                  "into an array (channels last) and use flow(x, y)")

    def flow_from_dataframe(self, *args, **kwargs):
        raise NotImplementedError("flow_from_dataframe: graphgrad.compat.keras reads no image files; use flow(x, y)")


class NumpyArrayIterator(PyDataset):
    """Augmented, standardized batches ``(x, y)`` (or ``x`` when ``y`` is None) of arrays, reshuffled each
    epoch; ``len()`` is the number of batches, ``it[i]`` one batch, and ``next(it)`` runs on forever."""

    def __init__(self, x: Any, y: Any, generator: ImageDataGenerator, batch_size: int = 32, shuffle: bool = True,
                 seed: Optional[int] = None, subset: Optional[str] = None) -> None:
        super().__init__()
        x = np.asarray(x)
        if x.ndim != 4:
            raise ValueError(f"ImageDataGenerator.flow: x must be (n, rows, cols, channels), got shape {x.shape}")
        y = None if y is None else np.asarray(y)
        if y is not None and len(y) != len(x):
            raise ValueError(f"ImageDataGenerator.flow: x and y have {len(x)} and {len(y)} samples")
        if subset is not None:
            if subset not in ("training", "validation"):
                raise ValueError(f"flow: subset must be 'training' or 'validation', got {subset!r}")
            cut = int(np.ceil(generator.validation_split * len(x)))
            x, y = (x[:cut], None if y is None else y[:cut]) if subset == "validation" else \
                (x[cut:], None if y is None else y[cut:])
        self.x, self.y, self.generator = x, y, generator
        self.batch_size, self.shuffle = int(batch_size), bool(shuffle)
        self.n = len(x)
        self._rng = np.random.default_rng(seed)
        self._order = self._rng.permutation(self.n) if shuffle else np.arange(self.n)
        self._next = 0

    def __len__(self) -> int:
        return (self.n + self.batch_size - 1) // self.batch_size

    def _batch(self, index: Any):
        """The samples at ``index``, augmented (the affine parts sampled for the whole batch at once) and
        standardized."""
        gen = self.generator
        xs = self.x[index].astype(gen.dtype)
        h, w = xs.shape[1:3]
        params = [gen.get_random_transform(xs.shape[1:], rng=self._rng) for _ in range(len(xs))]
        matrices = [_transform_matrix(p["theta"], p["tx"], p["ty"], p["shear"], p["zx"], p["zy"], h, w)
                    for p in params]
        moved = [i for i, m in enumerate(matrices) if m is not None]
        if moved:
            xs[moved] = _affine(xs[moved], np.stack([matrices[i] for i in moved]), gen.fill_mode, gen.cval,
                                gen.interpolation_order)
        plain = {"theta": 0, "tx": 0, "ty": 0, "shear": 0, "zx": 1, "zy": 1}
        if gen.preprocessing_function is None:  # the normalizations at once for the batch
            xs = gen.standardize(np.stack([gen.apply_transform(img, {**p, **plain}) for img, p in zip(xs, params)]))
        else:  # Keras calls it on each image
            xs = np.stack([gen.standardize(gen.apply_transform(img, {**p, **plain})) for img, p in zip(xs, params)])
        return xs if self.y is None else (xs, self.y[index])

    def __getitem__(self, index: int):
        if index >= len(self) or index < -len(self):
            raise IndexError(f"batch {index} of {len(self)}")
        index %= len(self)
        return self._batch(self._order[index * self.batch_size:(index + 1) * self.batch_size])

    def on_epoch_end(self) -> None:
        if self.shuffle:
            self._order = self._rng.permutation(self.n)

    def reset(self) -> None:
        self._next = 0

    def __iter__(self):
        return self

    def __next__(self):
        if self._next >= len(self):
            self._next = 0
            self.on_epoch_end()
        batch = self[self._next]
        self._next += 1
        return batch

    next = __next__
