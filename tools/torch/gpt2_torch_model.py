"""gpt2_torch_model.py — the one plain-PyTorch GPT-2 that the comparisons with the engine share (gpt2_export.py, the
same initial weights and tokens; gpt2_corpus.py, the same corpus): laid out as the engine's, its recipe and the corpus.

The model is nanoGPT's modules: pre-LN blocks, q, k and v from one (3C, C) linear, GELU (tanh), LayerNorm eps 1e-5
(nn.LayerNorm's, the engine's), attention scaled by 1 / sqrt(C / heads) (scaled_dot_product_attention's default, the
engine's), the head tied to the token embedding. The token embedding has vocab_pad rows, the last ones 0, and the loss
reads the first vocab logits, as the engine's head does; those rows get no gradient, so they stay 0.

Nothing here imports PyTorch at load: the callers pass the module in, so --help and the layout need none.
"""
import math
import struct
import sys

# gpt2_shape.c's table: layers, width, heads, context, vocab, vocab_pad.
SHAPES = {
    "tiny": (2, 64, 4, 64, 512, 512),
    "small": (12, 768, 12, 1024, 50257, 50304),
    "medium": (24, 1024, 16, 1024, 50257, 50304),
    "large": (36, 1280, 20, 1024, 50257, 50304),
    "xl": (48, 1600, 25, 1024, 50257, 50304),
}
ALIGN = 64  # GPT2_ALIGN: every tensor of the flat layout starts at a multiple of 64 elements

# The engine's AdamW (gpt2_model.h's gpt2_adamw_cfg_t as the tests and gpt2_bench set it): GPT-2's recipe.
BETAS = (0.9, 0.95)
EPS = 1e-8
WEIGHT_DECAY = 0.1
MAX_NORM = 1.0

# engine/tokens.h's token file: a 32-byte header, then uint16 tokens.
TOKENS_MAGIC = b"SCTOKENS"


def layout(shape):
    """gpt2_layout: [(name, layer, (rows, cols), at)] in layer order, and the flat buffer's elements."""
    layers, c = shape[0], shape[1]
    dims = {"ln1.w": (1, c), "ln1.b": (1, c), "qkv.w": (3 * c, c), "qkv.b": (1, 3 * c), "attn_proj.w": (c, c),
            "attn_proj.b": (1, c), "ln2.w": (1, c), "ln2.b": (1, c), "fc.w": (4 * c, c), "fc.b": (1, 4 * c),
            "mlp_proj.w": (c, 4 * c), "mlp_proj.b": (1, c)}
    names = [("wte", -1, (shape[5], c)), ("wpe", -1, (shape[3], c))]
    for layer in range(layers):
        names += [(n, layer, dims[n]) for n in dims]  # dicts keep their order: the layout's
    names += [("lnf.w", -1, (1, c)), ("lnf.b", -1, (1, c))]
    out, at = [], 0
    for name, layer, rc in names:
        out.append((name, layer, rc, at))
        at += (rc[0] * rc[1] + ALIGN - 1) // ALIGN * ALIGN
    return out, at


def read_tokens(torch, path):
    """A token file (engine/tokens.h) as an int64 CPU tensor of its n tokens, checked as tokens_load checks the
    header and the size; and its vocabulary."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 32 or data[:8] != TOKENS_MAGIC:
        sys.exit("%s: not a token file (engine/tokens.h)" % path)
    version, vocab, n, eot, _docs = struct.unpack_from("<IIQII", data, 8)
    if version != 1 or not 1 <= vocab <= 65536 or eot >= vocab or n < 1 or len(data) != 32 + 2 * n:
        sys.exit("%s: version %d, vocabulary %d, %d tokens in %d bytes: not a valid token file" % (
            path, version, vocab, n, len(data)))
    if sys.byteorder != "little":
        sys.exit("this machine is big-endian; the token file is little-endian")
    # uint16 through int16 (every PyTorch has it): the tokens past 32767 come back negative, the mask undoes that
    tok = torch.frombuffer(bytearray(data[32:]), dtype=torch.int16).to(torch.int64) & 0xFFFF
    if int(tok.max()) >= vocab:
        sys.exit("%s: a token past the vocabulary of %d" % (path, vocab))
    return tok, vocab


def build(torch, shape):
    """The model, on the CPU in fp32 with PyTorch's default initialisation (init_gpt2 replaces it): model(idx,
    targets) is the mean cross-entropy over the targets that are not -1."""
    nn, F = torch.nn, torch.nn.functional
    layers, c, heads, context, vocab, vocab_pad = shape

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(c, eps=1e-5), nn.LayerNorm(c, eps=1e-5)
            self.c_attn, self.attn_proj = nn.Linear(c, 3 * c), nn.Linear(c, c)
            self.c_fc, self.mlp_proj = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)   # q, k, v each C wide, heads contiguous in each
            q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)   # scale 1 / sqrt(C / heads)
            x = x + self.attn_proj(y.transpose(1, 2).contiguous().view(b, t, c))
            return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab_pad, c), nn.Embedding(context, c)
            self.h = nn.ModuleList(Block() for _ in range(layers))
            self.ln_f = nn.LayerNorm(c, eps=1e-5)

        def forward(self, idx, targets):
            t = idx.shape[1]
            x = self.wte(idx) + self.wpe(torch.arange(t, device=idx.device))
            for block in self.h:
                x = block(x)
            logits = F.linear(self.ln_f(x), self.wte.weight)[..., :vocab]  # the tied head, its real rows
            return F.cross_entropy(logits.float().reshape(-1, vocab), targets.reshape(-1), ignore_index=-1)

    return GPT()


def init_gpt2(torch, model, shape, gen):
    """GPT-2's initialisation, as gpt2_layout_init's rule (its draws are PyTorch's from gen, not rng.h's): every 2-D
    tensor normal(0, 0.02), the residual projections normal(0, 0.02 / sqrt(2 layers)), biases 0, gains 1."""
    std, proj_std = 0.02, 0.02 / math.sqrt(2 * shape[0])
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 2:
                p.normal_(0.0, proj_std if name.endswith("proj.weight") else std, generator=gen)
            elif name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight":
                p.fill_(1.0)
            else:
                p.zero_()
        model.wte.weight[shape[4]:].zero_()  # the padding rows


# Our tensor names (gpt2_shape.c's) against the module's parameter names.
BLOCK_NAMES = {"ln1.w": "ln_1.weight", "ln1.b": "ln_1.bias", "qkv.w": "c_attn.weight", "qkv.b": "c_attn.bias",
               "attn_proj.w": "attn_proj.weight", "attn_proj.b": "attn_proj.bias", "ln2.w": "ln_2.weight",
               "ln2.b": "ln_2.bias", "fc.w": "c_fc.weight", "fc.b": "c_fc.bias", "mlp_proj.w": "mlp_proj.weight",
               "mlp_proj.b": "mlp_proj.bias"}
TOP_NAMES = {"wte": "wte.weight", "wpe": "wpe.weight", "lnf.w": "ln_f.weight", "lnf.b": "ln_f.bias"}


def flatten(torch, model, shape):
    """The parameters in gpt2_shape's flat layout: a CPU fp32 tensor, the padding between tensors 0. Every parameter
    of the model is placed exactly once."""
    params = dict(model.named_parameters())
    slices, n = layout(shape)
    flat = torch.zeros(n, dtype=torch.float32)
    placed = set()
    for name, layer, (rows, cols), at in slices:
        key = TOP_NAMES[name] if layer < 0 else "h.%d.%s" % (layer, BLOCK_NAMES[name])
        t = params[key].detach().float().cpu()
        # nn.Linear's weight is (out, in), row-major: the engine's; a vector is (1, n) in the layout
        assert tuple(t.shape) == ((rows, cols) if t.dim() == 2 else (cols,)), (key, tuple(t.shape), rows, cols)
        flat[at:at + rows * cols] = t.reshape(-1)
        placed.add(key)
    assert placed == set(params), sorted(set(params) - placed)
    return flat


def adamw(torch, model, lr, fused):
    """torch.optim.AdamW as the engine's: weight decay on exactly the tensors gpt2_tensor_decays flags (every 2-D one:
    both embeddings, the token embedding being also the head, and the four matrices of a block), none on biases and
    LayerNorms."""
    decay = [p for p in model.parameters() if p.dim() == 2]
    rest = [p for p in model.parameters() if p.dim() != 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY}, {"params": rest, "weight_decay": 0.0}],
                             lr=lr, betas=BETAS, eps=EPS, fused=fused)
