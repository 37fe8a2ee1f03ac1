

def test_an_endless_epoch_with_replacement_is_drawn_as_it_is_read():
    import itertools

    import graphgrad as gg

    sampler = gg.data.RandomSampler(range(10), replacement=True, num_samples=int(1e10), generator=gg.Generator(0))
    assert len(sampler) == int(1e10)
    assert all(0 <= i < 10 for i in itertools.islice(iter(sampler), 10000))
    loader = gg.data.DataLoader(gg.data.TensorDataset(gg.arange(10.0)), batch_size=4, sampler=sampler)
    batch, = next(iter(loader))
    assert batch.shape == (4,)
