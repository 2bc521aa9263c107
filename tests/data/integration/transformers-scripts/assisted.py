"""Assisted generation over a batch of four prompts (transformers refuses: batch size 1)."""
from transformers import AutoModelForCausalLM, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("meta-llama/Llama-3.1-8B-Instruct")
model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.1-8B-Instruct")
draft = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B-Instruct")
draft.generation_config.num_assistant_tokens = 5
draft.generation_config.assistant_confidence_threshold = 0

prompts = ["Summarise the report.", "Translate it.", "List the risks.", "Draft a reply."]
inputs = tokenizer(prompts, return_tensors="pt", padding=True)
out = model.generate(**inputs, assistant_model=draft, do_sample=False, max_new_tokens=128)
