"""``torchvision.models``: ResNet, VGG and AlexNet built from the facade's ``torch.nn``, with
torchvision's parameter names (``layer1.0.conv1.weight``...), so a ``state_dict`` saved from either
side loads into the other.

Pretrained weights are not downloaded: pass ``weights=None`` (the default) and, to start from trained
weights, ``model.load_state_dict(torch.load(path))`` of a checkpoint you have.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Type, Union

from graphgrad.compat.torch import nn


class _Weights:
    """A stand-in for torchvision's weight enums (``ResNet18_Weights.DEFAULT``...): the names exist,
    building a model with them raises (no download)."""

    def __init__(self, model: str, name: str) -> None:
        self.model, self.name = model, name

    def __repr__(self) -> str:
        return f"{self.model}_Weights.{self.name}"


def _weights_enum(model: str):
    return type(f"{model}_Weights", (), {"IMAGENET1K_V1": _Weights(model, "IMAGENET1K_V1"),
                                         "IMAGENET1K_V2": _Weights(model, "IMAGENET1K_V2"),
                                         "DEFAULT": _Weights(model, "DEFAULT")})


def _no_weights(builder: str, weights: Any, pretrained: Any) -> None:
    if weights is not None or pretrained:
        raise RuntimeError(f"{builder}: pretrained weights ({weights or 'pretrained=True'}) are not downloaded by "
                           f"graphgrad; build it with weights=None and load a state_dict you have "
                           f"(model.load_state_dict(torch.load(path)))")


# ---- ResNet -------------------------------------------------------------------------------------------
def conv3x3(in_planes: int, out_planes: int, stride: int = 1, groups: int = 1, dilation: int = 1) -> nn.Conv2d:
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation, groups=groups,
                     bias=False, dilation=dilation)


def conv1x1(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: Optional[nn.Module] = None,
                 groups: int = 1, base_width: int = 64, dilation: int = 1,
                 norm_layer: Optional[Callable] = None) -> None:
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise ValueError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: Optional[nn.Module] = None,
                 groups: int = 1, base_width: int = 64, dilation: int = 1,
                 norm_layer: Optional[Callable] = None) -> None:
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


class ResNet(nn.Module):
    """Shapes: (N, 3, H, W) -> (N, num_classes) logits (any H, W of at least 32: adaptive pooling)."""

    def __init__(self, block: Type[Union[BasicBlock, Bottleneck]], layers: List[int], num_classes: int = 1000,
                 zero_init_residual: bool = False, groups: int = 1, width_per_group: int = 64,
                 replace_stride_with_dilation: Optional[List[bool]] = None,
                 norm_layer: Optional[Callable] = None) -> None:
        super().__init__()
        self._norm_layer = norm_layer or nn.BatchNorm2d
        self.inplanes, self.dilation = 64, 1
        replace_stride_with_dilation = replace_stride_with_dilation or [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("replace_stride_with_dilation should be None or a 3-element tuple, got "
                             f"{replace_stride_with_dilation}")
        self.groups, self.base_width = groups, width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = self._norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2, dilate=replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2, dilate=replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2, dilate=replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, Bottleneck):
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock):
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes: int, blocks: int, stride: int = 1, dilate: bool = False) -> nn.Sequential:
        norm_layer, downsample, previous_dilation = self._norm_layer, None, self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width, previous_dilation,
                        norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups, base_width=self.base_width,
                                dilation=self.dilation, norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(self.avgpool(x).flatten(1))


def _resnet(name: str, block, layers: List[int], weights, pretrained, **kwargs) -> ResNet:
    _no_weights(name, weights, pretrained)
    return ResNet(block, layers, **kwargs)


def resnet18(*, weights=None, progress: bool = True, pretrained: bool = False, **kwargs) -> ResNet:
    return _resnet("resnet18", BasicBlock, [2, 2, 2, 2], weights, pretrained, **kwargs)


def resnet34(*, weights=None, progress: bool = True, pretrained: bool = False, **kwargs) -> ResNet:
    return _resnet("resnet34", BasicBlock, [3, 4, 6, 3], weights, pretrained, **kwargs)


def resnet50(*, weights=None, progress: bool = True, pretrained: bool = False, **kwargs) -> ResNet:
    return _resnet("resnet50", Bottleneck, [3, 4, 6, 3], weights, pretrained, **kwargs)


def resnet101(*, weights=None, progress: bool = True, pretrained: bool = False, **kwargs) -> ResNet:
    return _resnet("resnet101", Bottleneck, [3, 4, 23, 3], weights, pretrained, **kwargs)


def resnet152(*, weights=None, progress: bool = True, pretrained: bool = False, **kwargs) -> ResNet:
    return _resnet("resnet152", Bottleneck, [3, 8, 36, 3], weights, pretrained, **kwargs)


def resnext50_32x4d(*, weights=None, progress: bool = True, pretrained: bool = False, **kwargs) -> ResNet:
    return _resnet("resnext50_32x4d", Bottleneck, [3, 4, 6, 3], weights, pretrained,
                   **{"groups": 32, "width_per_group": 4, **kwargs})


def wide_resnet50_2(*, weights=None, progress: bool = True, pretrained: bool = False, **kwargs) -> ResNet:
    return _resnet("wide_resnet50_2", Bottleneck, [3, 4, 6, 3], weights, pretrained,
                   **{"width_per_group": 128, **kwargs})


# ---- VGG and AlexNet ----------------------------------------------------------------------------------
_VGG_CONFIGS = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}


def make_layers(cfg: list, batch_norm: bool = False) -> nn.Sequential:
    layers: list = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            continue
        layers.append(nn.Conv2d(in_channels, v, kernel_size=3, padding=1))
        if batch_norm:
            layers.append(nn.BatchNorm2d(v))
        layers.append(nn.ReLU(inplace=True))
        in_channels = v
    return nn.Sequential(*layers)


class VGG(nn.Module):
    """Shapes: (N, 3, H, W) -> (N, num_classes) (adaptive pooling to 7x7 before the classifier)."""

    def __init__(self, features: nn.Module, num_classes: int = 1000, init_weights: bool = True,
                 dropout: float = 0.5) -> None:
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
                                        nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
                                        nn.Linear(4096, num_classes))
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


def _vgg(name: str, cfg: str, batch_norm: bool, weights, pretrained, **kwargs) -> VGG:
    _no_weights(name, weights, pretrained)
    return VGG(make_layers(_VGG_CONFIGS[cfg], batch_norm=batch_norm), **kwargs)


def vgg11(*, weights=None, progress: bool = True, pretrained: bool = False, **kwargs) -> VGG:
    return _vgg("vgg11", "A", False, weights, pretrained, **kwargs)


def vgg11_bn(*, weights=None, progress: bool = True, pretrained: bool = False, **kwargs) -> VGG:
    return _vgg("vgg11_bn", "A", True, weights, pretrained, **kwargs)


def vgg13(*, weights=None, progress: bool = True, pretrained: bool = False, **kwargs) -> VGG:
    return _vgg("vgg13", "B", False, weights, pretrained, **kwargs)


def vgg13_bn(*, weights=None, progress: bool = True, pretrained: bool = False, **kwargs) -> VGG:
    return _vgg("vgg13_bn", "B", True, weights, pretrained, **kwargs)


def vgg16(*, weights=None, progress: bool = True, pretrained: bool = False, **kwargs) -> VGG:
    return _vgg("vgg16", "D", False, weights, pretrained, **kwargs)


def vgg16_bn(*, weights=None, progress: bool = True, pretrained: bool = False, **kwargs) -> VGG:
    return _vgg("vgg16_bn", "D", True, weights, pretrained, **kwargs)


def vgg19(*, weights=None, progress: bool = True, pretrained: bool = False, **kwargs) -> VGG:
    return _vgg("vgg19", "E", False, weights, pretrained, **kwargs)


def vgg19_bn(*, weights=None, progress: bool = True, pretrained: bool = False, **kwargs) -> VGG:
    return _vgg("vgg19_bn", "E", True, weights, pretrained, **kwargs)


class AlexNet(nn.Module):
    """Shapes: (N, 3, H, W) (H, W >= 63) -> (N, num_classes)."""

    def __init__(self, num_classes: int = 1000, dropout: float = 0.5) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2))
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(nn.Dropout(p=dropout), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True),
                                        nn.Dropout(p=dropout), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
                                        nn.Linear(4096, num_classes))

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


def alexnet(*, weights=None, progress: bool = True, pretrained: bool = False, **kwargs) -> AlexNet:
    _no_weights("alexnet", weights, pretrained)
    return AlexNet(**kwargs)


ResNet18_Weights, ResNet34_Weights, ResNet50_Weights = (_weights_enum("ResNet18"), _weights_enum("ResNet34"),
                                                        _weights_enum("ResNet50"))
ResNet101_Weights, ResNet152_Weights = _weights_enum("ResNet101"), _weights_enum("ResNet152")
VGG11_Weights, VGG16_Weights, VGG19_Weights = _weights_enum("VGG11"), _weights_enum("VGG16"), _weights_enum("VGG19")
AlexNet_Weights = _weights_enum("AlexNet")

_BUILDERS = {f.__name__: f for f in (resnet18, resnet34, resnet50, resnet101, resnet152, resnext50_32x4d,
                                      wide_resnet50_2, vgg11, vgg11_bn, vgg13, vgg13_bn, vgg16, vgg16_bn, vgg19,
                                      vgg19_bn, alexnet)}


def list_models() -> list:
    return sorted(_BUILDERS)


def get_model(name: str, **config) -> nn.Module:
    if name not in _BUILDERS:
        raise ValueError(f"unknown model {name!r}; available: {', '.join(sorted(_BUILDERS))}")
    return _BUILDERS[name](**config)
