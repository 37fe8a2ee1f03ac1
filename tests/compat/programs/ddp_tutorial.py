# Data-parallel training written as PyTorch's DDP tutorials write it: init_process_group, a model
# wrapped in DistributedDataParallel, a DistributedSampler with set_epoch, collectives on tensors
# (all_gather, all_reduce). Launched with `mpiexec -n 2 python ddp_tutorial.py` on graphgrad (with
# the import shim) instead of torchrun; as a plain process it is a world of one.
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.optim as optim
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    dist.init_process_group("gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()

    torch.manual_seed(1)
    x = torch.randn(512, 10)
    y = ((x[:, 0] + 0.5 * x[:, 1]) > 0).long()
    dataset = TensorDataset(x, y)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
    ddp_model = DDP(model)
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    for epoch in range(4):
        sampler.set_epoch(epoch)
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(ddp_model(xb), yb)
            loss.backward()
            optimizer.step()

    # every rank holds the same weights
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    gathered = [torch.zeros_like(flat) for _ in range(world_size)]
    dist.all_gather(gathered, flat)
    assert all(torch.allclose(g, gathered[0]) for g in gathered), "the replicas differ"

    with torch.no_grad():
        accuracy = (model(x).argmax(dim=1) == y).float().mean().reshape(1)
    dist.all_reduce(accuracy, op=dist.ReduceOp.SUM)
    accuracy /= world_size
    if rank == 0:
        print(f"world {world_size}")
        print(f"accuracy {accuracy.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
