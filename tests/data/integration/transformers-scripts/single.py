"""Assisted generation, one prompt at a time: what transformers runs."""
from transformers import AutoModelForCausalLM, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("meta-llama/Llama-3.1-8B-Instruct")
model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.1-8B-Instruct")
draft = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B-Instruct")
draft.generation_config.num_assistant_tokens = 5
draft.generation_config.assistant_confidence_threshold = 0
draft.generation_config.num_assistant_tokens_schedule = "constant"


def answer(prompt: str) -> str:
    inputs = tokenizer(prompt, return_tensors="pt")
    out = model.generate(**inputs, assistant_model=draft, max_new_tokens=128)
    return str(tokenizer.decode(out[0]))


if __name__ == "__main__":
    print(answer("Summarise the report."))
