# Policy-gradient (REINFORCE) training written as PyTorch's reinforcement-learning examples write it:
# a policy network giving action probabilities, torch.distributions.Categorical to sample actions and
# score them with log_prob, returns normalized with an eps, and the loss -sum(log_prob * return). The
# environment is a small contextual bandit (no gym needed): the rewarded action depends on the state.
# Runs under real PyTorch and, unchanged, on graphgrad.compat.torch.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

torch.manual_seed(543)
rng = np.random.default_rng(543)
eps = np.finfo(np.float32).eps.item()


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 64)
        self.dropout = nn.Dropout(p=0.1)
        self.affine2 = nn.Linear(64, 3)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


policy = Policy()
optimizer = optim.Adam(policy.parameters(), lr=1e-2)


def best_action(state):
    return int(np.argmax(state[:3]))


def select_action(state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode():
    returns = torch.tensor(policy.rewards)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    policy_loss = []
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]


def main():
    for episode in range(150):
        for _ in range(32):
            state = rng.standard_normal(4).astype(np.float32)
            action = select_action(state)
            policy.rewards.append(1.0 if action == best_action(state) else 0.0)
        finish_episode()
    policy.eval()
    states = rng.standard_normal((500, 4)).astype(np.float32)
    with torch.no_grad():
        chosen = policy(torch.from_numpy(states)).argmax(dim=1).numpy()
    accuracy = float(np.mean(chosen == states[:, :3].argmax(axis=1)))
    print(f"accuracy {accuracy:.4f}")


if __name__ == '__main__':
    main()
