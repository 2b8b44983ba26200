"""The integration suite against SGLang's real OpenAI server (scripted scheduler, CPU)."""
