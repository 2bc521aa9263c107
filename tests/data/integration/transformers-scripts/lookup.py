"""Prompt lookup decoding with a static cache (transformers refuses both together)."""
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

tokenizer = AutoTokenizer.from_pretrained("Qwen/Qwen2.5-7B-Instruct")
model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B-Instruct")
config = GenerationConfig(prompt_lookup_num_tokens=10, cache_implementation="static")
ids = tokenizer("Rewrite this paragraph.", return_tensors="pt").input_ids
model.generate(ids, generation_config=config, max_new_tokens=256)
