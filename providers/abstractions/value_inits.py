"""The ``__init__`` of each value type a chat client is made of, as
``value_class`` writes it (``records.init_source``), compiled once into the bytecode cache like
any module where a cold start would otherwise compile each with ``exec`` (``records.py`` says
what that costs).

Written by ``tests/unit/providers/abstractions/test_value_inits.py``: do not edit. A function is
named after its class and its source's checksum, which is how ``value_class`` finds it.
"""
# mypy: ignore-errors

def _AIContent_056532b6(_d_raw, _d_additional_properties):
    def __init__(self, *, raw=_d_raw, additional_properties=_d_additional_properties):
        self.raw = raw; self.additional_properties = additional_properties
    return __init__
def _BackendProfile_b97c1beb(_set, _d_reasoning_fields, _d_stop_sequence_fields, _d_request_stream_usage, _d_merge_system_messages, _d_max_tokens_field, _d_replay_reasoning, _d_json_schema_fields, _d_template_kwargs, _d_effort_field, _d_include_reasoning_field, _d_enforces_json_schema, _d_constraint_keys, _d_stop_in_reasoning, _d_honours_single_tool_call, _d_droppable_keys, _d_responses_constraints, _d_replays_function_calls, _d_probes, _d_model_field_ignored, _d_embedding_encoding, _d_embedding_batch_limit, _d_timings):
    def __init__(self, name, reasoning_fields=_d_reasoning_fields, stop_sequence_fields=_d_stop_sequence_fields, request_stream_usage=_d_request_stream_usage, merge_system_messages=_d_merge_system_messages, max_tokens_field=_d_max_tokens_field, replay_reasoning=_d_replay_reasoning, json_schema_fields=_d_json_schema_fields, template_kwargs=_d_template_kwargs, effort_field=_d_effort_field, include_reasoning_field=_d_include_reasoning_field, enforces_json_schema=_d_enforces_json_schema, constraint_keys=_d_constraint_keys, stop_in_reasoning=_d_stop_in_reasoning, honours_single_tool_call=_d_honours_single_tool_call, droppable_keys=_d_droppable_keys, responses_constraints=_d_responses_constraints, replays_function_calls=_d_replays_function_calls, probes=_d_probes, model_field_ignored=_d_model_field_ignored, embedding_encoding=_d_embedding_encoding, embedding_batch_limit=_d_embedding_batch_limit, timings=_d_timings):
        _set(self, 'name', name); _set(self, 'reasoning_fields', reasoning_fields); _set(self, 'stop_sequence_fields', stop_sequence_fields); _set(self, 'request_stream_usage', request_stream_usage); _set(self, 'merge_system_messages', merge_system_messages); _set(self, 'max_tokens_field', max_tokens_field); _set(self, 'replay_reasoning', replay_reasoning); _set(self, 'json_schema_fields', json_schema_fields); _set(self, 'template_kwargs', template_kwargs); _set(self, 'effort_field', effort_field); _set(self, 'include_reasoning_field', include_reasoning_field); _set(self, 'enforces_json_schema', enforces_json_schema); _set(self, 'constraint_keys', constraint_keys); _set(self, 'stop_in_reasoning', stop_in_reasoning); _set(self, 'honours_single_tool_call', honours_single_tool_call); _set(self, 'droppable_keys', droppable_keys); _set(self, 'responses_constraints', responses_constraints); _set(self, 'replays_function_calls', replays_function_calls); _set(self, 'probes', probes); _set(self, 'model_field_ignored', model_field_ignored); _set(self, 'embedding_encoding', embedding_encoding); _set(self, 'embedding_batch_limit', embedding_batch_limit); _set(self, 'timings', timings)
    return __init__
def _BackendTimingsExtractor_3ac77eb8(_set, _d_read_timings, _d_cache_flag):
    def __init__(self, backend, read_timings=_d_read_timings, cache_flag=_d_cache_flag):
        _set(self, 'backend', backend); _set(self, 'read_timings', read_timings); _set(self, 'cache_flag', cache_flag)
    return __init__
def _ChatMessage_520e9a75(_FACTORY, _f_contents, _d_author_name, _d_message_id, _d_raw, _d_additional_properties):
    def __init__(self, role, contents=_FACTORY, author_name=_d_author_name, message_id=_d_message_id, raw=_d_raw, additional_properties=_d_additional_properties):
        self.role = role; self.contents = _f_contents() if contents is _FACTORY else contents; self.author_name = author_name; self.message_id = message_id; self.raw = raw; self.additional_properties = additional_properties; self.__post_init__()
    return __init__
def _ChatOptions_ce319f01(_d_model_id, _d_temperature, _d_top_p, _d_top_k, _d_max_output_tokens, _d_stop_sequences, _d_seed, _d_frequency_penalty, _d_presence_penalty, _d_tools, _d_tool_mode, _d_allow_multiple_tool_calls, _d_response_format, _FACTORY, _f_additional_properties, _d_headers, _d_conversation_id, _d_reasoning):
    def __init__(self, model_id=_d_model_id, temperature=_d_temperature, top_p=_d_top_p, top_k=_d_top_k, max_output_tokens=_d_max_output_tokens, stop_sequences=_d_stop_sequences, seed=_d_seed, frequency_penalty=_d_frequency_penalty, presence_penalty=_d_presence_penalty, tools=_d_tools, tool_mode=_d_tool_mode, allow_multiple_tool_calls=_d_allow_multiple_tool_calls, response_format=_d_response_format, additional_properties=_FACTORY, headers=_d_headers, conversation_id=_d_conversation_id, reasoning=_d_reasoning):
        self.model_id = model_id; self.temperature = temperature; self.top_p = top_p; self.top_k = top_k; self.max_output_tokens = max_output_tokens; self.stop_sequences = stop_sequences; self.seed = seed; self.frequency_penalty = frequency_penalty; self.presence_penalty = presence_penalty; self.tools = tools; self.tool_mode = tool_mode; self.allow_multiple_tool_calls = allow_multiple_tool_calls; self.response_format = response_format; self.additional_properties = _f_additional_properties() if additional_properties is _FACTORY else additional_properties; self.headers = headers; self.conversation_id = conversation_id; self.reasoning = reasoning; self.__post_init__()
    return __init__
def _ChatResponseFormat_223ba23d(_set, _d_schema, _d_schema_name, _d_schema_description, _d_strict, _d_pattern, _d_choices, _d_grammar_text, _d_syntax):
    def __init__(self, kind, schema=_d_schema, schema_name=_d_schema_name, schema_description=_d_schema_description, strict=_d_strict, pattern=_d_pattern, choices=_d_choices, grammar_text=_d_grammar_text, syntax=_d_syntax):
        _set(self, 'kind', kind); _set(self, 'schema', schema); _set(self, 'schema_name', schema_name); _set(self, 'schema_description', schema_description); _set(self, 'strict', strict); _set(self, 'pattern', pattern); _set(self, 'choices', choices); _set(self, 'grammar_text', grammar_text); _set(self, 'syntax', syntax)
    return __init__
def _ChatResponse_6d522acb(_FACTORY, _f_messages, _d_response_id, _d_model_id, _d_created_at, _d_finish_reason, _d_usage, _f_additional_properties, _d_raw):
    def __init__(self, messages=_FACTORY, response_id=_d_response_id, model_id=_d_model_id, created_at=_d_created_at, finish_reason=_d_finish_reason, usage=_d_usage, additional_properties=_FACTORY, raw=_d_raw):
        self.messages = _f_messages() if messages is _FACTORY else messages; self.response_id = response_id; self.model_id = model_id; self.created_at = created_at; self.finish_reason = finish_reason; self.usage = usage; self.additional_properties = _f_additional_properties() if additional_properties is _FACTORY else additional_properties; self.raw = raw
    return __init__
def _ClientTimings_eb688da1(_set, _d_response_headers, _d_first_byte, _d_first_token, _d_last_token, _d_substantive_updates):
    def __init__(self, started, request_sent, end, response_headers=_d_response_headers, first_byte=_d_first_byte, first_token=_d_first_token, last_token=_d_last_token, substantive_updates=_d_substantive_updates):
        _set(self, 'started', started); _set(self, 'request_sent', request_sent); _set(self, 'end', end); _set(self, 'response_headers', response_headers); _set(self, 'first_byte', first_byte); _set(self, 'first_token', first_token); _set(self, 'last_token', last_token); _set(self, 'substantive_updates', substantive_updates)
    return __init__
def _DataContent_0d03af95(_d_raw, _d_additional_properties):
    def __init__(self, data, media_type, *, raw=_d_raw, additional_properties=_d_additional_properties):
        self.data = data; self.media_type = media_type; self.raw = raw; self.additional_properties = additional_properties
    return __init__
def _Endpoint_7bded4be(_set, _d_username, _d_password):
    def __init__(self, api_base, server_root, username=_d_username, password=_d_password):
        _set(self, 'api_base', api_base); _set(self, 'server_root', server_root); _set(self, 'username', username); _set(self, 'password', password)
    return __init__
def _ErrorContent_5df0abfb(_d_code, _d_raw, _d_additional_properties):
    def __init__(self, message, code=_d_code, *, raw=_d_raw, additional_properties=_d_additional_properties):
        self.message = message; self.code = code; self.raw = raw; self.additional_properties = additional_properties
    return __init__
def _FunctionCallContent_2009f3c1(_FACTORY, _f_arguments, _d_raw_arguments, _d_error, _d_raw, _d_additional_properties):
    def __init__(self, call_id, name, arguments=_FACTORY, raw_arguments=_d_raw_arguments, error=_d_error, *, raw=_d_raw, additional_properties=_d_additional_properties):
        self.call_id = call_id; self.name = name; self.arguments = _f_arguments() if arguments is _FACTORY else arguments; self.raw_arguments = raw_arguments; self.error = error; self.raw = raw; self.additional_properties = additional_properties
    return __init__
def _FunctionResultContent_7e2cc8e4(_d_result, _d_raw, _d_additional_properties):
    def __init__(self, call_id, result=_d_result, *, raw=_d_raw, additional_properties=_d_additional_properties):
        self.call_id = call_id; self.result = result; self.raw = raw; self.additional_properties = additional_properties
    return __init__
def _Limits_88850c27(_set, _d_max_event_bytes, _d_max_body_bytes, _d_max_stream_bytes, _d_max_error_body_bytes, _d_max_output_bytes, _d_max_tool_argument_bytes, _d_max_tool_calls, _d_max_held_text_bytes, _d_max_held_updates, _d_max_json_depth, _d_max_connections, _d_max_keepalive_connections):
    def __init__(self, max_event_bytes=_d_max_event_bytes, max_body_bytes=_d_max_body_bytes, max_stream_bytes=_d_max_stream_bytes, max_error_body_bytes=_d_max_error_body_bytes, max_output_bytes=_d_max_output_bytes, max_tool_argument_bytes=_d_max_tool_argument_bytes, max_tool_calls=_d_max_tool_calls, max_held_text_bytes=_d_max_held_text_bytes, max_held_updates=_d_max_held_updates, max_json_depth=_d_max_json_depth, max_connections=_d_max_connections, max_keepalive_connections=_d_max_keepalive_connections):
        _set(self, 'max_event_bytes', max_event_bytes); _set(self, 'max_body_bytes', max_body_bytes); _set(self, 'max_stream_bytes', max_stream_bytes); _set(self, 'max_error_body_bytes', max_error_body_bytes); _set(self, 'max_output_bytes', max_output_bytes); _set(self, 'max_tool_argument_bytes', max_tool_argument_bytes); _set(self, 'max_tool_calls', max_tool_calls); _set(self, 'max_held_text_bytes', max_held_text_bytes); _set(self, 'max_held_updates', max_held_updates); _set(self, 'max_json_depth', max_json_depth); _set(self, 'max_connections', max_connections); _set(self, 'max_keepalive_connections', max_keepalive_connections); self.__post_init__()
    return __init__
def _ReasoningOptions_d3a316f1(_set, _d_effort, _d_output):
    def __init__(self, effort=_d_effort, output=_d_output):
        _set(self, 'effort', effort); _set(self, 'output', output)
    return __init__
def _RequestRecord_8b248b33(_set, _d_request_model, _d_response_model, _d_response_id, _d_finish_reasons, _d_usage, _d_retry_attempts, _d_error):
    def __init__(self, status, backend, streamed, timings, request_model=_d_request_model, response_model=_d_response_model, response_id=_d_response_id, finish_reasons=_d_finish_reasons, usage=_d_usage, retry_attempts=_d_retry_attempts, error=_d_error):
        _set(self, 'status', status); _set(self, 'backend', backend); _set(self, 'streamed', streamed); _set(self, 'timings', timings); _set(self, 'request_model', request_model); _set(self, 'response_model', response_model); _set(self, 'response_id', response_id); _set(self, 'finish_reasons', finish_reasons); _set(self, 'usage', usage); _set(self, 'retry_attempts', retry_attempts); _set(self, 'error', error)
    return __init__
def _RequestTimings_d31c72c6(_set, _d_server):
    def __init__(self, backend, streamed, client, server=_d_server):
        _set(self, 'backend', backend); _set(self, 'streamed', streamed); _set(self, 'client', client); _set(self, 'server', server)
    return __init__
def _RetryDecision_6546f33b(_set, _d_wait, _d_reason, _d_refusal):
    def __init__(self, retry, wait=_d_wait, reason=_d_reason, refusal=_d_refusal):
        _set(self, 'retry', retry); _set(self, 'wait', wait); _set(self, 'reason', reason); _set(self, 'refusal', refusal)
    return __init__
def _RetryPolicy_bd9dddb0(_set, _d_max_attempts, _d_base_delay, _d_max_delay, _d_max_retry_after, _d_max_total_delay, _d_retry_statuses):
    def __init__(self, max_attempts=_d_max_attempts, base_delay=_d_base_delay, max_delay=_d_max_delay, max_retry_after=_d_max_retry_after, max_total_delay=_d_max_total_delay, retry_statuses=_d_retry_statuses):
        _set(self, 'max_attempts', max_attempts); _set(self, 'base_delay', base_delay); _set(self, 'max_delay', max_delay); _set(self, 'max_retry_after', max_retry_after); _set(self, 'max_total_delay', max_total_delay); _set(self, 'retry_statuses', retry_statuses); self.__post_init__()
    return __init__
def _ServerSentEvent_fac7c96f(_d_event, _d_id, _d_retry):
    def __init__(self, data, event=_d_event, id=_d_id, retry=_d_retry):
        self.data = data; self.event = event; self.id = id; self.retry = retry
    return __init__
def _ServerTimings_2c0a5892(_set, _d_input_tokens, _d_output_tokens, _d_cached_input_tokens, _d_reasoning_tokens, _d_prompt_n, _d_prompt_ms, _d_prompt_per_token_ms, _d_prompt_per_second, _d_predicted_n, _d_predicted_ms, _d_predicted_per_token_ms, _d_predicted_per_second, _d_draft_n, _d_draft_n_accepted, _d_missing_cache_flag):
    def __init__(self, backend, input_tokens=_d_input_tokens, output_tokens=_d_output_tokens, cached_input_tokens=_d_cached_input_tokens, reasoning_tokens=_d_reasoning_tokens, prompt_n=_d_prompt_n, prompt_ms=_d_prompt_ms, prompt_per_token_ms=_d_prompt_per_token_ms, prompt_per_second=_d_prompt_per_second, predicted_n=_d_predicted_n, predicted_ms=_d_predicted_ms, predicted_per_token_ms=_d_predicted_per_token_ms, predicted_per_second=_d_predicted_per_second, draft_n=_d_draft_n, draft_n_accepted=_d_draft_n_accepted, missing_cache_flag=_d_missing_cache_flag):
        _set(self, 'backend', backend); _set(self, 'input_tokens', input_tokens); _set(self, 'output_tokens', output_tokens); _set(self, 'cached_input_tokens', cached_input_tokens); _set(self, 'reasoning_tokens', reasoning_tokens); _set(self, 'prompt_n', prompt_n); _set(self, 'prompt_ms', prompt_ms); _set(self, 'prompt_per_token_ms', prompt_per_token_ms); _set(self, 'prompt_per_second', prompt_per_second); _set(self, 'predicted_n', predicted_n); _set(self, 'predicted_ms', predicted_ms); _set(self, 'predicted_per_token_ms', predicted_per_token_ms); _set(self, 'predicted_per_second', predicted_per_second); _set(self, 'draft_n', draft_n); _set(self, 'draft_n_accepted', draft_n_accepted); _set(self, 'missing_cache_flag', missing_cache_flag)
    return __init__
def _TextContent_e166686a(_d_raw, _d_additional_properties):
    def __init__(self, text, *, raw=_d_raw, additional_properties=_d_additional_properties):
        self.text = text; self.raw = raw; self.additional_properties = additional_properties
    return __init__
def _TextReasoningContent_e166686a(_d_raw, _d_additional_properties):
    def __init__(self, text, *, raw=_d_raw, additional_properties=_d_additional_properties):
        self.text = text; self.raw = raw; self.additional_properties = additional_properties
    return __init__
def _Timeouts_284bd065(_set, _d_connect, _d_first_token, _d_idle, _d_total):
    def __init__(self, connect=_d_connect, first_token=_d_first_token, idle=_d_idle, total=_d_total):
        _set(self, 'connect', connect); _set(self, 'first_token', first_token); _set(self, 'idle', idle); _set(self, 'total', total); self.__post_init__()
    return __init__
def _ToolDeclaration_4216c206(_set, _d_description, _d_parameters):
    def __init__(self, name, description=_d_description, parameters=_d_parameters):
        _set(self, 'name', name); _set(self, 'description', description); _set(self, 'parameters', parameters)
    return __init__
def _UriContent_91f916ed(_d_media_type, _d_raw, _d_additional_properties):
    def __init__(self, uri, media_type=_d_media_type, *, raw=_d_raw, additional_properties=_d_additional_properties):
        self.uri = uri; self.media_type = media_type; self.raw = raw; self.additional_properties = additional_properties
    return __init__
def _UsageContent_73674c6b(_d_raw, _d_additional_properties):
    def __init__(self, details, *, raw=_d_raw, additional_properties=_d_additional_properties):
        self.details = details; self.raw = raw; self.additional_properties = additional_properties
    return __init__
def _UsageDetails_3695bea1(_d_input_token_count, _d_output_token_count, _d_total_token_count, _d_cached_input_token_count, _d_reasoning_token_count, _d_additional_counts):
    def __init__(self, input_token_count=_d_input_token_count, output_token_count=_d_output_token_count, total_token_count=_d_total_token_count, cached_input_token_count=_d_cached_input_token_count, reasoning_token_count=_d_reasoning_token_count, additional_counts=_d_additional_counts):
        self.input_token_count = input_token_count; self.output_token_count = output_token_count; self.total_token_count = total_token_count; self.cached_input_token_count = cached_input_token_count; self.reasoning_token_count = reasoning_token_count; self.additional_counts = additional_counts
    return __init__
def _UsageNames_34766311(_set):
    def __init__(self, *, prompt, completion, total, cached, reasoning):
        _set(self, 'prompt', prompt); _set(self, 'completion', completion); _set(self, 'total', total); _set(self, 'cached', cached); _set(self, 'reasoning', reasoning)
    return __init__
