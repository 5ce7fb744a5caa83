// toolgrammar's driver of llama.cpp's chat-output parsing, for bench/peer_llamacpp.py.
//
// Reads one JSON request per line on stdin and writes one JSON answer per line on stdout:
//
//   in:  {"template": PATH, "tools": [OpenAI tool objects], "text": MODEL OUTPUT,
//         "partial": false, "reasoning_format": "auto"|"none"|..., "enable_thinking": false,
//         "parallel_tool_calls": true}
//   out: {"format": NAME, "content": STR, "reasoning_content": STR,
//         "tool_calls": [[NAME, ARGUMENTS], ...], "generation_prompt": STR}   or   {"error": WHY}
//
// With "render_only": true the text is not parsed: the answer is "format" and
// "generation_prompt", or the error of a template that cannot render the request.
// "generation_prompt" is the end of the prompt the parser takes as already written (a thinking
// block the template opens, for one). Omitted request fields take llama.cpp's own defaults of
// `common_chat_templates_inputs`, but "parallel_tool_calls" (true here, as a client asks).
//
// The chat template is read once per path (as a server reads its model's template once); each
// request renders the template's prompt for one user message and the request's tools, which
// yields the parser the server would use for that request, then parses the text with it.

#include "chat.h"
#include "json.h"
#include "log.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

using ordered = nlohmann::ordered_json;

namespace {

std::string slurp(const std::string & path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot read " + path);
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

std::map<std::string, common_chat_templates_ptr> g_templates;

common_chat_templates * templates_of(const std::string & path) {
    auto found = g_templates.find(path);
    if (found == g_templates.end()) {
        found = g_templates.emplace(path, common_chat_templates_init(nullptr, slurp(path))).first;
    }
    return found->second.get();
}

ordered answer(const ordered & request) {
    common_chat_templates_inputs inputs;
    common_chat_msg user;
    user.role = "user";
    user.content = request.value("user", std::string("Hello"));
    inputs.messages = {user};
    inputs.add_generation_prompt = true;
    inputs.use_jinja = true;
    inputs.parallel_tool_calls = request.value("parallel_tool_calls", true);
    inputs.enable_thinking = request.value("enable_thinking", true);
    inputs.reasoning_format =
        common_reasoning_format_from_name(request.value("reasoning_format", std::string("none")));
    if (request.contains("tools") && !request["tools"].empty()) {
        inputs.tools = common_chat_tools_parse_oaicompat(common_json::parse(request["tools"].dump()));
    }

    common_chat_params params = common_chat_templates_apply(templates_of(request["template"]), inputs);
    if (request.value("render_only", false)) {  // only whether the template renders the request
        ordered out;
        out["format"] = common_chat_format_name(params.format);
        out["generation_prompt"] = params.generation_prompt;
        return out;
    }
    common_chat_parser_params parser_params(params);
    parser_params.reasoning_format = inputs.reasoning_format;
    if (!params.parser.empty()) {
        parser_params.parser.load(params.parser);
    }
    common_chat_msg msg =
        common_chat_parse(request["text"].get<std::string>(), request.value("partial", false), parser_params);

    ordered out;
    out["format"] = common_chat_format_name(params.format);
    out["content"] = msg.content;
    out["reasoning_content"] = msg.reasoning_content;
    ordered calls = ordered::array();
    for (const auto & call : msg.tool_calls) {
        calls.push_back(ordered::array({call.name, call.arguments}));
    }
    out["tool_calls"] = calls;
    out["generation_prompt"] = params.generation_prompt;
    return out;
}

}  // namespace

int main() {
    common_log_set_verbosity_thold(-1);
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) {
            continue;
        }
        ordered out;
        try {
            out = answer(ordered::parse(line));
        } catch (const std::exception & error) {
            out = ordered::object();
            out["error"] = std::string(error.what());
        }
        std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        std::cout.flush();
    }
    return 0;
}
