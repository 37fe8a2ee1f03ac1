"""``tf.gfile`` (TF1's names: ``Exists``, ``MakeDirs``, ``DeleteRecursively``, ``GFile``...) and
``tf.io.gfile`` (the lowercase names) on the local file system, as TF1 programs use them for their log
and checkpoint folders."""
from __future__ import annotations

import glob as _glob
import os
import shutil
import types


def _copy(src: str, dst: str, overwrite: bool = False) -> None:
    if not overwrite and os.path.exists(dst):
        raise FileExistsError(f"{dst} exists (pass overwrite=True)")
    shutil.copyfile(src, dst)


def _rename(src: str, dst: str, overwrite: bool = False) -> None:
    if not overwrite and os.path.exists(dst):
        raise FileExistsError(f"{dst} exists (pass overwrite=True)")
    os.replace(src, dst)


def _walk(top: str, topdown: bool = True, onerror=None):
    return os.walk(top, topdown=topdown, onerror=onerror)


def _makedirs(path: str) -> None:
    os.makedirs(path, exist_ok=True)


gfile = types.SimpleNamespace(
    Exists=os.path.exists, MakeDirs=_makedirs, MkDir=_makedirs, DeleteRecursively=shutil.rmtree,
    Remove=os.remove, IsDirectory=os.path.isdir, ListDirectory=os.listdir, Glob=_glob.glob, GFile=open,
    Open=open, FastGFile=open, Copy=_copy, Rename=_rename, Walk=_walk)

io = types.SimpleNamespace(gfile=types.SimpleNamespace(
    exists=os.path.exists, makedirs=_makedirs, mkdir=_makedirs, rmtree=shutil.rmtree, remove=os.remove,
    isdir=os.path.isdir, listdir=os.listdir, glob=_glob.glob, GFile=open, copy=_copy, rename=_rename,
    walk=_walk))
