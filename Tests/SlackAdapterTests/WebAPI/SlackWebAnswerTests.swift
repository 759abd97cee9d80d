import RelayCore
import RelayHTTP
import RelayPipeline
import RelayPlatform
import Testing

@testable import SlackAdapter

/// How answers Slack and proxies send are read, without a server.
@Suite("Slack Web API answers")
struct SlackWebAnswerTests {
    static func read(
        _ status: Int, _ body: String, retryAfter: String? = nil, responseURL: Bool = false
    ) -> Result<SlackAnswer, SlackAPIError> {
        SlackWebClient.interpret(
            status: status, retryAfter: RetryAfter.parse(retryAfter), body: Array(body.utf8), method: responseURL ? "response_url" : "chat.update",
            isResponseURL: responseURL)
    }

    @Test func okTrueIsSuccessAndOkFalseIsARefusalWhateverTheStatus() {
        #expect(Self.read(200, #"{"ok":true,"ts":"1.2"}"#) == .success(SlackAnswer(["ok": true, "ts": "1.2"])))
        #expect(
            Self.read(200, #"{"ok":false,"error":"cant_update_message"}"#)
                == .failure(.refused(endpoint: "chat.update", SlackRefusal(code: "cant_update_message", status: 200))))
        #expect(Self.read(200, #"{"ok":false}"#) == .failure(.refused(endpoint: "chat.update", SlackRefusal(code: "unknown_error", status: 200))))
        #expect(
            Self.read(400, #"{"ok":false,"error":"invalid_arguments"}"#)
                == .failure(.refused(endpoint: "chat.update", SlackRefusal(code: "invalid_arguments", status: 400))))
        #expect(Self.read(403, "Forbidden") == .failure(.refused(endpoint: "chat.update", SlackRefusal(code: "http_403", status: 403))))
    }

    @Test func rateLimitsReadRetryAfter() {
        #expect(
            Self.read(429, #"{"ok":false,"error":"ratelimited"}"#, retryAfter: "30")
                == .failure(.rateLimited(endpoint: "chat.update", retryAfter: .seconds(30))))
        #expect(Self.read(429, "", retryAfter: " 7 ") == .failure(.rateLimited(endpoint: "chat.update", retryAfter: .seconds(7))))
        // An HTTP date already past means "now"; a missing or unreadable header, 1 s.
        #expect(
            Self.read(429, "", retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT")
                == .failure(.rateLimited(endpoint: "chat.update", retryAfter: .zero)))
        #expect(Self.read(429, "", retryAfter: "soon") == .failure(.rateLimited(endpoint: "chat.update", retryAfter: .seconds(1))))
        #expect(Self.read(429, "") == .failure(.rateLimited(endpoint: "chat.update", retryAfter: .seconds(1))))
        // A hostile value never parks the conversation past 15 minutes.
        #expect(Self.read(429, "", retryAfter: "1e300") == .failure(.rateLimited(endpoint: "chat.update", retryAfter: .seconds(900))))
        #expect(
            Self.read(200, #"{"ok":false,"error":"ratelimited"}"#, retryAfter: "3")
                == .failure(.rateLimited(endpoint: "chat.update", retryAfter: .seconds(3))))
    }

    @Test func serverErrorsAndGarbageAreRetryable() {
        #expect(Self.read(502, "<html>Bad Gateway</html>") == .failure(.server(endpoint: "chat.update", status: 502)))
        #expect(Self.read(200, "<html></html>") == .failure(.malformed(endpoint: "chat.update", reason: "the body is not JSON")))
        #expect(Self.read(200, #"{"ts":"1"}"#) == .failure(.malformed(endpoint: "chat.update", reason: "the body has no \"ok\"")))
    }

    @Test func aResponseURLMayAnswerPlainTextAndExpiresWithA404() {
        #expect(Self.read(200, "ok", responseURL: true) == .success(SlackAnswer([:])))
        #expect(Self.read(200, #"{"ok":true}"#, responseURL: true) == .success(SlackAnswer(["ok": true])))
        #expect(Self.read(404, "", responseURL: true) == .failure(.refused(endpoint: "response_url", SlackRefusal(code: "expired_url", status: 404))))
        #expect(
            Self.read(404, #"{"ok":false,"error":"used_url"}"#, responseURL: true)
                == .failure(.refused(endpoint: "response_url", SlackRefusal(code: "used_url", status: 404))))
    }

    @Test func errorCodesAreSanitisedAndWarningsRead() {
        let long = String(repeating: "x", count: 500)
        guard case .failure(.refused(_, let refusal)) = Self.read(200, #"{"ok":false,"error":"Bad <b>Thing</b> \#(long)"}"#) else {
            Issue.record("expected a refusal")
            return
        }
        let code = refusal.code
        #expect(code.count <= 64)
        #expect(code.allSatisfy { $0.isLowercase || $0.isNumber || "_.-".contains($0) })
        #expect(
            (try? Self.read(200, #"{"ok":true,"warning":"message_truncated,superfluous_charset"}"#).get())?.warnings
                == ["message_truncated", "superfluous_charset"])
        #expect((try? Self.read(200, #"{"ok":true,"response_metadata":{"warnings":["missing_charset",7]}}"#).get())?.warnings == ["missing_charset"])
        // A proxy's odd members read as absent: the call still worked.
        #expect((try? Self.read(200, #"{"ok":true,"warning":3,"response_metadata":"x"}"#).get())?.warnings == [])
    }

    @Test func everyErrorMapsToADeliveryOutcome() {
        let cases: [(SlackAPIError, String)] = [
            (.rateLimited(endpoint: "m", retryAfter: .seconds(2)), "rateLimited"),
            (.refused(endpoint: "m", SlackRefusal(code: "channel_not_found", status: 200)), "rejected"),
            (.refused(endpoint: "m", SlackRefusal(code: "service_unavailable", status: 200)), "retryable"),
            (.server(endpoint: "m", status: 503), "retryable"),
            (.timedOut(endpoint: "m", after: .seconds(10)), "retryable"),
            (.unreachable(endpoint: "m", reason: "connection refused"), "retryable"),
            (.malformed(endpoint: "m", reason: "x"), "retryable"),
            (.invalidRequest(endpoint: "m", reason: "x"), "rejected"),
            (.cancelled(endpoint: "m"), "retryable"),
        ]
        for (error, expected) in cases {
            let kind: String =
                switch error.deliveryOutcome {
                case .rateLimited: "rateLimited"
                case .retryable: "retryable"
                case .rejected: "rejected"
                case .sent, .partDelivered: "sent"
                }
            #expect(kind == expected, "\(error)")
            #expect(error.reason.hasPrefix("m: "))
        }
    }

    @Test func requestsNeverPrintTheirCredentials() {
        let request = SlackWebRequest(.responseURL("https://hooks.slack.com/commands/T1/2/secret"), body: ["text": "x"])
        #expect("\(request)" == "SlackWebRequest(response_url)")
        #expect(!String(reflecting: request).contains("secret"))
        var dumped = ""
        dump(request, to: &dumped)
        #expect(!dumped.contains("secret"))
        #expect(request.label == "response_url")
    }
}
