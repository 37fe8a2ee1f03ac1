"""Packed variable-length sequences (graphgrad.nn.rnn_utils, torch.nn.utils.rnn): packing round trips,
and RNN/LSTM/GRU on a PackedSequence equal to running every sequence alone over its own length."""
import numpy as np
import pytest

import graphgrad as gg
from graphgrad.nn import rnn_utils as R

LENGTHS = [3, 6, 1, 6, 4]


def _batch(batch_first):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 6, 4) if batch_first else (6, 5, 4))
    return x


@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_and_pad_round_trip(batch_first):
    x = _batch(batch_first)
    packed = R.pack_padded_sequence(gg.tensor(x), LENGTHS, batch_first=batch_first, enforce_sorted=False)
    assert packed.batch_sizes.tolist() == [5, 4, 4, 3, 2, 2] and packed.data.shape == (sum(LENGTHS), 4)
    padded, lengths = R.pad_packed_sequence(packed, batch_first=batch_first, total_length=7)
    assert lengths.tolist() == LENGTHS
    seq = x if batch_first else x.swapaxes(0, 1)
    got = padded.numpy() if batch_first else padded.numpy().swapaxes(0, 1)
    for n, length in enumerate(LENGTHS):
        np.testing.assert_array_equal(got[n, :length], seq[n, :length])
        assert np.all(got[n, length:] == 0) and got.shape[1] == 7
    assert [s.shape[0] for s in R.unpack_sequence(packed)] == LENGTHS


def test_enforce_sorted_and_errors():
    with pytest.raises(gg.ShapeError, match="decreasing"):
        R.pack_padded_sequence(gg.zeros((6, 5, 2)), LENGTHS)
    with pytest.raises(gg.ShapeError, match="exceeds"):
        R.pack_padded_sequence(gg.zeros((2, 1, 2)), [3])
    packed = R.pack_sequence([gg.ones((3, 2)), gg.ones((2, 2))])
    assert packed.sorted_indices is None and packed.batch_sizes.tolist() == [2, 2, 1]
    padded = R.pad_sequence([gg.ones(2), gg.ones(3)], batch_first=True, padding_value=-1.0, padding_side="left")
    assert padded.tolist() == [[-1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]


@pytest.mark.parametrize("mode,bidirectional,batch_first,layers", [("LSTM", True, True, 2), ("GRU", False, False, 1),
                                                                   ("RNN", True, False, 2)])
def test_rnn_on_packed_equals_each_sequence_alone(mode, bidirectional, batch_first, layers):
    gg.manual_seed(1)
    net = getattr(gg.nn, mode)(4, 3, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first)
    net = net.to(gg.float64)
    x = _batch(batch_first)
    packed = R.pack_padded_sequence(gg.tensor(x), LENGTHS, batch_first=batch_first, enforce_sorted=False)
    out, state = net(packed)
    h_n = state[0] if mode == "LSTM" else state
    padded, _ = R.pad_packed_sequence(out, batch_first=True)
    seq = x if batch_first else x.swapaxes(0, 1)
    for n, length in enumerate(LENGTHS):
        alone = gg.tensor(seq[n, :length])  # unbatched (L, H_in)
        y, s = net(alone if not batch_first else alone, None)
        h_alone = s[0] if mode == "LSTM" else s
        np.testing.assert_allclose(padded.numpy()[n, :length], y.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(h_n.numpy()[:, n], h_alone.numpy(), rtol=1e-10, atol=1e-12)
        assert np.all(padded.numpy()[n, length:] == 0)


def test_gradients_flow_through_packing():
    x = gg.tensor(_batch(False), requires_grad=True)
    net = gg.nn.GRU(4, 3).to(gg.float64)
    out, h = net(R.pack_padded_sequence(x, LENGTHS, enforce_sorted=False))
    (out.data.sum() + h.sum()).backward()
    grad = x.grad.numpy()
    for n, length in enumerate(LENGTHS):
        assert np.all(grad[length:, n] == 0) and np.any(grad[:length, n] != 0)


def test_matches_pytorch_when_installed():
    torch = pytest.importorskip("torch")
    tm = torch.nn.LSTM(4, 3, num_layers=2, bidirectional=True, batch_first=True).double()
    gm = gg.nn.LSTM(4, 3, num_layers=2, bidirectional=True, batch_first=True)
    gm.load_state_dict({k: gg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    gm = gm.to(gg.float64)
    x = _batch(True)
    to, (th, tc) = tm(torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), LENGTHS, batch_first=True,
                                                              enforce_sorted=False))
    go, (gh, gc) = gm(R.pack_padded_sequence(gg.tensor(x), LENGTHS, batch_first=True, enforce_sorted=False))
    np.testing.assert_allclose(go.data.numpy(), to.data.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(gh.numpy(), th.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(gc.numpy(), tc.detach().numpy(), rtol=1e-10)
