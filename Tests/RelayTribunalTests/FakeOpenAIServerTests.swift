import Foundation
import RelayCore
import RelayTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The fake OpenAI-compatible server speaks the wire format the suites rely on.
@Suite("Fake OpenAI-compatible server", .serialized)
struct FakeOpenAIServerTests {
    /// One raw exchange with the fake, parsed.
    struct Exchange {
        var status: Int
        var retryAfter: String?
        var text: String
        var json: JSONValue? { JSONValue.parse(Array(text.utf8)) }
    }

    static let chat: JSONValue = [
        "model": "gpt-x",
        "messages": [["role": "system", "content": "Be brief."], ["role": "user", "content": "Is water wet?"]],
    ]

    /// Raw requests go through URLSession: this target cannot name NIO's header and status
    /// types, and the client under test should not be the one checking its own fake.
    func send(
        _ server: FakeOpenAIServer, _ method: String = "POST", _ path: String = "/v1/chat/completions",
        body: String? = nil, json: JSONValue? = FakeOpenAIServerTests.chat, key: String? = nil
    ) async throws -> Exchange {
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)\(path)"))
        var request = URLRequest(url: url, timeoutInterval: 10)
        request.httpMethod = method
        if let key { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
        if method == "POST" {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = body.map { Data($0.utf8) } ?? json.map { Data($0.encoded()) }
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        return Exchange(
            status: http.statusCode, retryAfter: http.value(forHTTPHeaderField: "Retry-After"),
            text: String(decoding: data, as: UTF8.self))
    }

    @Test func answersInTheRealCompletionShape() async throws {
        try await withFakeOpenAIServer { (server) async throws in
            #expect(server.url == "http://127.0.0.1:\(server.port)/v1")
            let json = try #require(try await send(server).json)
            #expect(json["id"]?.stringValue?.hasPrefix("chatcmpl-") == true)
            #expect(json["object"] == "chat.completion")
            #expect(json["created"]?.intValue != nil)
            #expect(json["model"] == "gpt-x")
            #expect(json["choices"]?[0]?["index"] == 0)
            #expect(json["choices"]?[0]?["message"]?["role"] == "assistant")
            #expect(
                json["choices"]?[0]?["message"]?["content"]
                    == #"{"verdict":"true","confidence":0.9,"answer":"Yes. Is water wet?"}"#)
            #expect(json["choices"]?[0]?["finish_reason"] == "stop")
            let usage = try #require(json["usage"])
            #expect(
                usage["total_tokens"]?.intValue == (usage["prompt_tokens"]?.intValue ?? 0)
                    + (usage["completion_tokens"]?.intValue ?? 0))
            #expect(server.requestCount() == 1)
            #expect(server.lastRequest()?["model"] == "gpt-x")
        }
    }

    @Test func listsItsModel() async throws {
        try await withFakeOpenAIServer(model: "llama-fake") { (server) async throws in
            for path in ["/v1/models", "/models"] {
                let json = try await send(server, "GET", path).json
                #expect(json?["object"] == "list")
                #expect(json?["data"]?[0]?["id"] == "llama-fake")
            }
        }
    }

    @Test func checksTheKeyLikeOpenAI() async throws {
        try await withFakeOpenAIServer(requiredKey: "sk-good-0123456789") { (server) async throws in
            let missing = try await send(server)
            #expect(missing.status == 401)
            #expect(missing.json?["error"]?["message"]?.stringValue?.hasPrefix("Incorrect API key provided") == true)
            #expect(missing.json?["error"]?["code"] == "invalid_api_key")
            let wrong = try await send(server, key: "sk-bad-abcdefghijkl")
            #expect(wrong.status == 401)
            #expect(wrong.text.contains("sk-"), "OpenAI shows a masked key; the fake does too")
            #expect(!wrong.text.contains("sk-bad-abcdefghijkl"))
            #expect(try await send(server, key: "sk-good-0123456789").status == 200)
            #expect(try await send(server, "GET", "/v1/models").status == 401)
        }
    }

    @Test func refusesMalformedRequests() async throws {
        try await withFakeOpenAIServer { (server) async throws in
            #expect(try await send(server, body: "{not json").status == 400)
            #expect(try await send(server, json: ["messages": [["role": "user", "content": "x"]]]).status == 400)
            #expect(try await send(server, json: ["model": "m", "messages": []]).status == 400)
            #expect(try await send(server, json: ["model": "m", "messages": [["content": "x"]]]).status == 400)
            let notFound = try await send(server, "POST", "/v1/embeddings")
            #expect(notFound.status == 404)
            #expect(notFound.json?["error"]?["message"] == "Invalid URL (POST /v1/embeddings)")
            #expect(try await send(server, "GET", "/v1/chat/completions").status == 405)
            // Refused requests do not advance a sequence.
            server.setPersona(.sequence([.disagree, .agree]))
            #expect(try await send(server, body: "[]").status == 400)
            #expect(try await send(server).text.contains(#"\"verdict\":\"false\""#))
        }
    }

    @Test func failsWithOpenAIErrorBodies() async throws {
        try await withFakeOpenAIServer(persona: .fail(status: 429, message: "Slow down")) { (server) async throws in
            let limited = try await send(server)
            #expect(limited.status == 429)
            #expect(limited.retryAfter == "1")
            #expect(limited.json?["error"]?["message"] == "Slow down")
            #expect(limited.json?["error"]?["type"] == "requests")
            #expect(limited.json?["error"]?["code"] == "rate_limit_exceeded")

            server.setPersona(.fail(status: 500, message: "boom"))
            let failed = try await send(server)
            #expect(failed.status == 500)
            #expect(failed.retryAfter == nil)
            #expect(failed.json?["error"]?["type"] == "server_error")

            server.setPersona(.malformedBody)
            let malformed = try await send(server)
            #expect(malformed.status == 200)
            #expect(malformed.json == nil)
        }
    }

    @Test func sequenceUsesOnePersonaPerRequestThenRepeatsTheLast() async throws {
        try await withFakeOpenAIServer(persona: .sequence([.fail(status: 503, message: "x"), .echo])) {
            (server) async throws in
            #expect(try await send(server).status == 503)
            #expect(try await send(server).json?["choices"]?[0]?["message"]?["content"] == "[gpt-x] Is water wet?")
            #expect(try await send(server).status == 200)
            server.setPersona(.sequence([.partly, .disagree]))
            #expect(try await send(server).text.contains("Partly. Is water wet?"))
        }
    }

    @Test func echoUsesTheLastUserMessageAndContentParts() async throws {
        try await withFakeOpenAIServer(persona: .echo) { (server) async throws in
            let json: JSONValue = [
                "model": "m",
                "messages": [
                    ["role": "user", "content": "first"], ["role": "assistant", "content": "reply"],
                    ["role": "user", "content": [["type": "text", "text": "second"]]],
                ],
            ]
            #expect(try await send(server, json: json).json?["choices"]?[0]?["message"]?["content"] == "[m] second")
        }
    }

    @Test func stopCutsOffAHangingAnswer() async throws {
        let server = try await FakeOpenAIServer.start(persona: .hang)
        let call = Task { try await send(server) }
        _ = try #require(await server.next())
        // `stop` returns (it cuts the hanging answer off) and the call ends without an answer.
        await server.stop()
        let result = await call.result
        #expect((try? result.get())?.status != 200)
    }
}
