"""graphgrad.compat.torchvision: transforms on PIL images and tensors, datasets from torchvision's
folder layout (and downloads), models with torchvision's parameter names and counts, utils and ops;
and a torchvision-style MNIST program that trains with the one changed import."""
from __future__ import annotations

import gzip
import os
import pickle
import struct
import subprocess
import sys

import numpy as np
import pytest

import graphgrad as gg
import graphgrad.compat.torch as torch
from graphgrad.compat.torchvision import datasets, models, ops, transforms, utils
from graphgrad.compat.torchvision.transforms import functional as TF

Image = pytest.importorskip("PIL.Image")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _rgb(h=6, w=8, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)


# ---- transforms ---------------------------------------------------------------------------------------
def test_to_tensor_scales_bytes_and_moves_channels_first():
    pixels = _rgb()
    t = transforms.ToTensor()(Image.fromarray(pixels))
    assert t.shape == (3, 6, 8) and t.dtype == gg.float32
    np.testing.assert_allclose(t.numpy(), pixels.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    gray = transforms.ToTensor()(Image.fromarray(pixels[:, :, 0], mode="L"))
    assert gray.shape == (1, 6, 8)
    assert transforms.PILToTensor()(Image.fromarray(pixels)).dtype == gg.uint8


def test_normalize_and_round_trip_to_pil():
    t = transforms.ToTensor()(Image.fromarray(_rgb()))
    n = transforms.Normalize((0.5, 0.5, 0.5), (0.25, 0.25, 0.25))(t)
    np.testing.assert_allclose(n.numpy(), (t.numpy() - 0.5) / 0.25, rtol=1e-6)
    back = transforms.ToPILImage()(t)
    assert back.size == (8, 6) and back.mode == "RGB"
    with pytest.raises(TypeError, match="float tensor"):
        transforms.Normalize((0.5,), (0.5,))(torch.zeros(1, 2, 2, dtype=torch.uint8))


def test_resize_matches_the_smaller_edge_and_keeps_the_aspect():
    img = Image.fromarray(_rgb(40, 60))
    assert transforms.Resize(20)(img).size == (30, 20)
    assert transforms.Resize((10, 12))(img).size == (12, 10)
    t = transforms.ToTensor()(img)
    assert transforms.Resize(20)(t).shape == (3, 20, 30)
    assert transforms.Resize(20, interpolation=transforms.InterpolationMode.NEAREST)(t).shape == (3, 20, 30)


def test_crops_and_flips_agree_between_pil_and_tensor():
    pixels = _rgb(10, 12)
    img, t = Image.fromarray(pixels), transforms.PILToTensor()(Image.fromarray(pixels))
    for op in (transforms.CenterCrop(6), transforms.CenterCrop((4, 8)), lambda x: TF.crop(x, 2, 3, 5, 4),
               TF.hflip, TF.vflip, transforms.Pad(2), transforms.Pad((1, 2, 3, 4), fill=7),
               transforms.Pad(3, padding_mode="reflect"), transforms.Grayscale(), transforms.Grayscale(3)):
        from_pil = np.asarray(transforms.PILToTensor()(op(img)).numpy(), dtype=np.int64)
        from_tensor = np.asarray(op(t).numpy(), dtype=np.int64)
        assert from_pil.shape == from_tensor.shape, op
        assert np.abs(from_pil - from_tensor).max() <= 1, op  # (PIL's luma rounds its own way)


def test_center_crop_offsets_are_torchvision_rounding():
    t = torch.arange(7 * 7).reshape(1, 7, 7)
    out = transforms.CenterCrop(4)(t)
    assert out.numpy()[0, 0, 0] == 2 * 7 + 2  # round((7 - 4) / 2) = 2


def test_random_transforms_are_reproducible_under_manual_seed():
    img = Image.fromarray(_rgb(32, 32))
    pipeline = transforms.Compose([transforms.RandomResizedCrop(16), transforms.RandomHorizontalFlip(),
                                   transforms.ColorJitter(0.4, 0.4, 0.4, 0.1), transforms.RandomRotation(15),
                                   transforms.RandomCrop(16, padding=2), transforms.ToTensor(),
                                   transforms.RandomErasing(p=1.0)])
    torch.manual_seed(3)
    a = pipeline(img)
    torch.manual_seed(3)
    b = pipeline(img)
    assert a.shape == (3, 16, 16)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert "RandomResizedCrop" in repr(pipeline)


def test_random_crop_pads_when_needed_and_names_a_too_small_image():
    t = torch.ones(1, 4, 4)
    assert transforms.RandomCrop(6, pad_if_needed=True)(t).shape == (1, 6, 6)
    with pytest.raises(ValueError, match="larger than the input image"):
        transforms.RandomCrop(6)(t)


def test_rotation_by_zero_and_by_quarter_turns():
    t = torch.tensor(np.arange(16, dtype=np.float32).reshape(1, 4, 4))
    np.testing.assert_array_equal(TF.rotate(t, 0.0).numpy(), t.numpy())
    np.testing.assert_array_equal(TF.rotate(t, 90.0).numpy()[0], np.rot90(t.numpy()[0]))


def test_convert_image_dtype_and_gaussian_blur():
    t = transforms.PILToTensor()(Image.fromarray(_rgb()))
    f = transforms.ConvertImageDtype(torch.float32)(t)
    np.testing.assert_allclose(f.numpy(), t.numpy() / 255.0, rtol=1e-6)
    blurred = transforms.GaussianBlur(3, sigma=1.0)(f)
    assert blurred.shape == f.shape and float(blurred.numpy().std()) < float(f.numpy().std())


# ---- datasets -----------------------------------------------------------------------------------------
def _write_idx(path, array):
    codes = {np.uint8: 0x08}
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(">BBBB", 0, 0, codes[array.dtype.type], array.ndim))
        f.write(struct.pack(f">{array.ndim}i", *array.shape))
        f.write(array.tobytes())


def _mnist_like(folder, n_train=60, n_test=20, seed=0):
    """Digits from scikit-learn's 8x8 set, scaled to 28x28 bytes, as MNIST's four files."""
    rng = np.random.default_rng(seed)
    os.makedirs(folder, exist_ok=True)
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        labels = rng.integers(0, 10, n).astype(np.uint8)
        images = np.zeros((n, 28, 28), np.uint8)
        for i, c in enumerate(labels):  # a bar whose position is the class: easy to learn
            images[i, 2 + 2 * c:4 + 2 * c, 4:24] = 255
        _write_idx(os.path.join(folder, f"{prefix}-images-idx3-ubyte.gz"), images)
        _write_idx(os.path.join(folder, f"{prefix}-labels-idx1-ubyte.gz"), labels)


def test_mnist_reads_torchvision_layout_and_gives_pil_images(tmp_path):
    _mnist_like(tmp_path / "MNIST" / "raw")
    data = datasets.MNIST(str(tmp_path), train=True)
    assert len(data) == 60 and data.data.shape == (60, 28, 28) and data.data.dtype == gg.uint8
    img, target = data[0]
    assert img.mode == "L" and img.size == (28, 28) and isinstance(target, int)
    with_t = datasets.MNIST(str(tmp_path), train=False, transform=transforms.ToTensor(),
                            target_transform=lambda y: y + 100)
    x, y = with_t[0]
    assert x.shape == (1, 28, 28) and y >= 100 and "Split: Test" in repr(with_t)
    with pytest.raises(RuntimeError, match="download=True"):
        datasets.FashionMNIST(str(tmp_path))


def test_mnist_download_fetches_missing_files_from_the_mirror(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    _mnist_like(mirror)
    monkeypatch.setitem(datasets.MIRRORS, "MNIST", mirror.as_uri() + "/")
    data = datasets.MNIST(str(tmp_path / "data"), train=False, download=True)
    assert len(data) == 20
    assert sorted(os.listdir(tmp_path / "data" / "MNIST" / "raw")) == ["t10k-images-idx3-ubyte.gz",
                                                                     "t10k-labels-idx1-ubyte.gz"]


def test_cifar10_gives_rgb_pil_images_and_hwc_bytes(tmp_path):
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (4, 3 * 32 * 32), dtype=np.uint8)
    with open(folder / "test_batch", "wb") as f:
        pickle.dump({b"data": pixels, b"labels": [3, 1, 4, 1]}, f)
    data = datasets.CIFAR10(str(tmp_path), train=False)
    assert data.data.shape == (4, 32, 32, 3) and data.targets == [3, 1, 4, 1]
    np.testing.assert_array_equal(data.data[0], pixels[0].reshape(3, 32, 32).transpose(1, 2, 0))
    img, target = data[2]
    assert img.mode == "RGB" and target == 4 and data.classes[target] == "deer"


def test_fake_data_is_the_same_for_the_same_index():
    data = datasets.FakeData(size=5, image_size=(3, 8, 8), num_classes=4, transform=transforms.ToTensor())
    a, b = data[2], data[2]
    np.testing.assert_array_equal(a[0].numpy(), b[0].numpy())
    assert a[0].shape == (3, 8, 8) and 0 <= a[1] < 4 and len(data) == 5
    with pytest.raises(IndexError):
        data[5]


def test_image_folder_finds_classes_and_loads_rgb(tmp_path):
    for name, value in (("cat", 10), ("dog", 200)):
        (tmp_path / name).mkdir()
        for k in range(2):
            Image.fromarray(np.full((5, 5), value + k, np.uint8), mode="L").save(tmp_path / name / f"{k}.png")
    (tmp_path / "dog" / "notes.txt").write_text("not an image")
    data = datasets.ImageFolder(str(tmp_path), transform=transforms.ToTensor())
    assert data.classes == ["cat", "dog"] and data.class_to_idx == {"cat": 0, "dog": 1}
    assert len(data) == 4 and data.targets == [0, 0, 1, 1]
    x, y = data[3]
    assert x.shape == (3, 5, 5) and y == 1
    loader = torch.utils.data.DataLoader(data, batch_size=2)
    batch, labels = next(iter(loader))
    assert batch.shape == (2, 3, 5, 5) and labels.tolist() == [0, 0]


# ---- models, utils, ops -------------------------------------------------------------------------------
def test_resnet18_has_torchvision_names_and_parameter_count():
    torch.manual_seed(0)
    model = models.resnet18(num_classes=10)
    assert sum(p.numel() for p in model.parameters()) == 11181642  # torchvision's resnet18(num_classes=10)
    keys = list(model.state_dict())
    assert keys[:5] == ["conv1.weight", "bn1.weight", "bn1.bias", "bn1.running_mean", "bn1.running_var"]
    assert "layer2.0.downsample.0.weight" in keys and keys[-2:] == ["fc.weight", "fc.bias"]
    out = model(torch.randn(2, 3, 32, 32))
    assert out.shape == (2, 10)
    out.sum().backward()
    assert model.conv1.weight.grad is not None


def test_bottleneck_resnet_and_builders():
    model = models.ResNet(models.Bottleneck, [1, 1, 1, 1], num_classes=3, zero_init_residual=True)
    assert model(torch.randn(2, 3, 32, 32)).shape == (2, 3)
    assert float(model.layer1[0].bn3.weight.abs().sum()) == 0.0
    assert "resnet50" in models.list_models()
    with pytest.raises(RuntimeError, match="weights=None"):
        models.resnet18(weights=models.ResNet18_Weights.DEFAULT)
    features = models.make_layers([8, "M", 16, "M"], batch_norm=True)
    assert features(torch.randn(1, 3, 8, 8)).shape == (1, 16, 2, 2)


def test_make_grid_and_save_image(tmp_path):
    batch = torch.rand(10, 1, 28, 28)
    grid = utils.make_grid(batch, nrow=5, padding=2)
    assert grid.shape == (3, 2 * 30 + 2, 5 * 30 + 2)
    np.testing.assert_allclose(grid.numpy()[0, 2:30, 2:30], batch.numpy()[0, 0])
    utils.save_image(batch, str(tmp_path / "grid.png"), nrow=5, normalize=True)
    assert Image.open(tmp_path / "grid.png").size == (152, 62)


def test_box_convert_round_trips_and_is_differentiable():
    boxes = torch.tensor([[1.0, 2.0, 5.0, 8.0]], requires_grad=True)
    cxcywh = ops.box_convert(boxes, "xyxy", "cxcywh")
    np.testing.assert_allclose(cxcywh.detach().numpy(), [[3.0, 5.0, 4.0, 6.0]])
    np.testing.assert_allclose(ops.box_convert(cxcywh, "cxcywh", "xywh").detach().numpy(), [[1.0, 2.0, 4.0, 6.0]])
    cxcywh.sum().backward()
    assert boxes.grad is not None
    assert ops.nms(torch.tensor([[0.0, 0, 2, 2], [0.1, 0, 2, 2]]), torch.tensor([0.9, 0.8]), 0.5).tolist() == [0]


# ---- a program ----------------------------------------------------------------------------------------
def test_a_torchvision_mnist_program_trains_with_one_changed_import(tmp_path):
    _mnist_like(tmp_path / "MNIST" / "raw", n_train=320, n_test=100)
    shim = "import graphgrad.compat.torch as t; t.install(); import runpy, sys; sys.argv = sys.argv[1:]; " \
           "runpy.run_path(sys.argv[0], run_name='__main__')"
    program = os.path.join(HERE, "torchvision_programs", "mnist_torchvision.py")
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", shim, program, str(tmp_path)], capture_output=True, text=True,
                          timeout=300, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    what, value = done.stdout.strip().splitlines()[-1].split()
    assert what == "accuracy" and float(value) >= 0.9, done.stdout[-500:]


def test_io_writes_and_reads_uint8_images(tmp_path):
    from graphgrad.compat.torchvision import io

    pixels = torch.tensor(_rgb(5, 7).transpose(2, 0, 1).copy())
    io.write_png(pixels, str(tmp_path / "a.png"))
    back = io.read_image(str(tmp_path / "a.png"))
    assert back.dtype == gg.uint8 and back.shape == (3, 5, 7)
    np.testing.assert_array_equal(back.numpy(), pixels.numpy())
    gray = io.read_image(str(tmp_path / "a.png"), io.ImageReadMode.GRAY)
    assert gray.shape == (1, 5, 7)
    assert io.decode_image(io.read_file(str(tmp_path / "a.png"))).shape == (3, 5, 7)
    assert io.read_image(str(tmp_path / "a.png"), io.ImageReadMode.RGB_ALPHA).shape == (4, 5, 7)


def test_colour_adjustments_of_tensors_blend_toward_black_gray_and_the_mean():
    t = transforms.ToTensor()(Image.fromarray(_rgb()))
    assert float(TF.adjust_brightness(t, 0.0).numpy().max()) == 0.0
    np.testing.assert_allclose(TF.adjust_brightness(t, 1.0).numpy(), t.numpy())
    gray = TF.adjust_saturation(t, 0.0).numpy()
    np.testing.assert_allclose(gray[0], gray[1], atol=1e-6)
    flat = TF.adjust_contrast(t, 0.0).numpy()
    assert np.ptp(flat) < 1e-6
    with pytest.raises(ValueError, match="contrast_factor"):
        TF.adjust_contrast(t, -1.0)


def test_transforms_are_modules_that_go_into_sequential():
    """As torchvision's: augmentations on batches of tensors inside nn.Sequential (DINO, BYOL)."""
    from graphgrad.compat import torchvision
    import graphgrad.compat.torch as torch

    T = torchvision.transforms
    aug = torch.nn.Sequential(T.RandomApply(torch.nn.ModuleList([T.ColorJitter(0.8, 0.8, 0.8, 0.2)]), p=0.3),
                              T.RandomGrayscale(p=0.2), T.RandomHorizontalFlip(),
                              T.Normalize(mean=torch.tensor([0.485, 0.456, 0.406]), std=torch.tensor([0.229, 0.224, 0.225])))
    assert tuple(aug(torch.rand(2, 3, 8, 8)).shape) == (2, 3, 8, 8)
    assert aug.to("cpu") is aug and isinstance(T.RandomGrayscale(0.2), torch.nn.Module)
    assert repr(T.RandomGrayscale(0.2)) == "RandomGrayscale(p=0.2)"


def test_adjust_hue_of_a_batch_of_tensors():
    from graphgrad.compat.torchvision.transforms import functional as TF
    import graphgrad as gg

    rng = np.random.default_rng(0)
    batch = rng.random((2, 3, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(TF.adjust_hue(gg.tensor(batch), 0.0).numpy(), batch, atol=1e-6)
    pure_red = np.zeros((1, 3, 1, 1), np.float32)
    pure_red[0, 0] = 1.0
    shifted = TF.adjust_hue(gg.tensor(pure_red), 1 / 3).numpy()[0, :, 0, 0]  # a third of the wheel: green
    np.testing.assert_allclose(shifted, [0.0, 1.0, 0.0], atol=1e-6)
    assert TF.adjust_hue(gg.tensor((batch * 255).astype(np.uint8)), -0.3).dtype == gg.uint8
