"""PyTorch reference implementations of six decoder-only transformer families.

Plain PyTorch written the way the Hugging Face modeling files write them, with
each family's native module names (the names `families/*.json` renames and
`examples/families/*.mlir` carries):

  gpt2    GPT2LMHeadModel   transformer.{wte, wpe, drop, h.N, ln_f}, lm_head
  llama   LlamaForCausalLM  model.{embed_tokens, layers.N, norm}, lm_head
  gemma2  Gemma2ForCausalLM model.{embed_tokens, layers.N, norm}, lm_head
  bloom   BloomForCausalLM  transformer.{word_embeddings, word_embeddings_layernorm,
                            h.N, ln_f}, lm_head
  cohere  CohereForCausalLM model.{embed_tokens, layers.N, norm}, lm_head
  falcon  FalconForCausalLM transformer.{word_embeddings, h.N, ln_f}, lm_head

Every module file exposes a config dataclass, `small_config()`, the model
class and `build(config, seed)` (the model in eval mode, every weight drawn
from the seed). Every attention calls the module-level `attention_interface`
(`common.py`) and returns `(output, probabilities)`. `hooks.py` reads and
writes the standardized tracing values with PyTorch hooks.
"""

from . import bloom, cohere, falcon, gemma2, gpt2, llama

FAMILIES = {
    "gpt2": gpt2,
    "llama": llama,
    "gemma2": gemma2,
    "bloom": bloom,
    "cohere": cohere,
    "falcon": falcon,
}


def build(family, config=None, seed=0):
    """The model of `family` (its `small_config()` unless `config`), seeded, eval mode."""
    mod = FAMILIES[family]
    return mod.build(config if config is not None else mod.small_config(), seed)
