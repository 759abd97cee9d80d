import AsyncHTTPClient
import Foundation
import Logging
import RelayCore
import RelayHTTP
import RelayPipeline
import RelayPlatform
import RelayTestSupport
import Synchronization
import Testing

@testable import TelegramAdapter

/// How Bot API answers are read, and what the client does before and around the network. The
/// lead's end-to-end tests run the client against a fake Bot API.
@Suite("Telegram Bot API client")
struct TelegramBotClientTests {
    static let token = TelegramToken("123:SECRET")

    static func read(_ status: Int, _ body: String, retryAfter: String? = nil, method: String = "sendMessage") -> Result<TelegramResult, TelegramAPIError> {
        Result { () throws(TelegramAPIError) in
            guard let retryAfter else { return try TelegramBotClient.interpret(HTTPAnswer(status: status, body: Array(body.utf8)), method: method) }
            return try TelegramBotClient.interpret(status: status, retryAfter: retryAfter, body: Array(body.utf8), method: method)
        }
    }

    /// A client on a real transport whose API URL is a closed port on 127.0.0.1.
    static func withClient(
        clock: ManualClock = ManualClock(), limiter: TelegramRateLimiter = .init(), _ body: (TelegramBotClient) async throws -> Void
    ) async throws {
        let http = HTTPTransport.makeClient()
        let client = TelegramBotClient(
            transport: HTTPTransport(client: http), apiURL: "http://127.0.0.1:1/", token: Self.token, limiter: limiter, clock: clock,
            logger: Logger(label: "test.telegram"))
        do {
            try await body(client)
        } catch {
            try await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }

    /// The error `operation` throws; nil (recorded) when it succeeds.
    static func failure<T>(_ operation: () async throws(TelegramAPIError) -> T) async -> TelegramAPIError? {
        do throws(TelegramAPIError) {
            _ = try await operation()
            Issue.record("expected a failure")
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Answers

    @Test func anOkAnswerGivesItsResult() {
        #expect(Self.read(200, #"{"ok":true,"result":{"message_id":7}}"#) == .success(TelegramResult(["message_id": 7])))
        #expect((try? Self.read(200, #"{"ok":true,"result":{"message_id":7}}"#).get().decode(TelegramSentMessage.self, method: "sendMessage"))?.messageID == 7)
        #expect(Self.read(200, #"{"ok":true,"result":true}"#) == .success(TelegramResult(true)))
        // A result without what the method needs names the field.
        #expect(
            Result { () throws(TelegramAPIError) in
                try Self.read(200, #"{"ok":true,"result":{}}"#).get().decode(TelegramSentMessage.self, method: "sendMessage")
            }
            .map(\.messageID) == .failure(.malformed(endpoint: "sendMessage", reason: "missing field `result.message_id`")))
        #expect(Self.read(200, #"{"ok":true}"#) == .failure(.malformed(endpoint: "sendMessage", reason: "no result")))
    }

    @Test func a429WaitsRetryAfterFromTheBodyElseTheHeaderElseASecond() {
        let body = #"{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 35","parameters":{"retry_after":35}}"#
        #expect(Self.read(429, body, retryAfter: "3") == .failure(.rateLimited(endpoint: "sendMessage", retryAfter: .seconds(35))))
        #expect(Self.read(429, #"{"ok":false,"error_code":429}"#, retryAfter: "7") == .failure(.rateLimited(endpoint: "sendMessage", retryAfter: .seconds(7))))
        #expect(Self.read(429, "Too Many Requests", retryAfter: "7") == .failure(.rateLimited(endpoint: "sendMessage", retryAfter: .seconds(7))))
        #expect(Self.read(429, "") == .failure(.rateLimited(endpoint: "sendMessage", retryAfter: .seconds(1))))
        // A hostile value never parks the chat past 15 minutes.
        UntrustedNumber.$observer.withValue(UntrustedNumber.Observer { _ in }) {
            #expect(
                Self.read(429, #"{"ok":false,"error_code":429,"parameters":{"retry_after":1e300}}"#)
                    == .failure(.rateLimited(endpoint: "sendMessage", retryAfter: .seconds(900))))
        }
    }

    @Test func aMigratedGroupNamesItsNewChatID() throws {
        let body =
            #"{"ok":false,"error_code":400,"description":"Bad Request: group chat was upgraded to a supergroup chat","#
            + #""parameters":{"migrate_to_chat_id":-1001234567890}}"#
        #expect(Self.read(400, body) == .failure(.refused(endpoint: "sendMessage", .migrated(newChatID: -1_001_234_567_890))))
        let error = TelegramAPIError.refused(endpoint: "sendMessage", .migrated(newChatID: -1_001_234_567_890))
        guard case .rejected(let reason) = error.deliveryOutcome else {
            Issue.record("a migration is final for the old id")
            return
        }
        #expect(reason.contains("supergroup") && reason.contains("-1001234567890"))
    }

    @Test func anEditThatChangesNothingIsRecognised() {
        let body =
            #"{"ok":false,"error_code":400,"description":"Bad Request: message is not modified: "#
            + #"specified new message content and reply markup are exactly the same"}"#
        guard case .failure(let error) = Self.read(400, body, method: "editMessageText") else {
            Issue.record("expected a refusal")
            return
        }
        #expect(error.isMessageNotModified)
        #expect(
            !TelegramAPIError.refused(endpoint: "editMessageText", .error(code: 400, description: "Bad Request: message to edit not found"))
                .isMessageNotModified)
    }

    @Test func refusalsKeepTelegramsCodeAndDescription() {
        #expect(
            Self.read(401, #"{"ok":false,"error_code":401,"description":"Unauthorized"}"#, method: "getMe")
                == .failure(.refused(endpoint: "getMe", .error(code: 401, description: "Unauthorized"))))
        #expect(
            Self.read(403, #"{"ok":false,"error_code":403,"description":"Forbidden: bot was blocked by the user"}"#)
                == .failure(.refused(endpoint: "sendMessage", .error(code: 403, description: "Forbidden: bot was blocked by the user"))))
        #expect(
            Self.read(400, #"{"ok":false,"error_code":400,"description":"Bad Request: message to edit not found"}"#)
                == .failure(.refused(endpoint: "sendMessage", .error(code: 400, description: "Bad Request: message to edit not found"))))
        #expect(Self.read(404, "<html>Not Found</html>") == .failure(.refused(endpoint: "sendMessage", .error(code: 404, description: ""))))
        let long = String(repeating: "x", count: 1000)
        guard case .failure(.refused(_, .error(_, let description))) = Self.read(400, #"{"ok":false,"error_code":400,"description":"a\nb\#(long)"}"#) else {
            Issue.record("expected a refusal")
            return
        }
        #expect(description.count <= TelegramBotClient.maxDescriptionLength + 1)
        #expect(!description.contains("\n"))
    }

    @Test func serverErrorsAndGarbageAreRetryable() {
        #expect(
            Self.read(500, #"{"ok":false,"error_code":500,"description":"Internal Server Error"}"#) == .failure(.server(endpoint: "sendMessage", status: 500)))
        #expect(Self.read(502, "<html>Bad Gateway</html>") == .failure(.server(endpoint: "sendMessage", status: 502)))
        #expect(Self.read(200, "<html></html>") == .failure(.malformed(endpoint: "sendMessage", reason: "not JSON")))
        #expect(Self.read(200, #"{"result":1}"#) == .failure(.malformed(endpoint: "sendMessage", reason: "no \"ok\"")))
        for error in [
            TelegramAPIError.server(endpoint: "m", status: 502), .timedOut(endpoint: "m", after: .seconds(15)), .unreachable(endpoint: "m", reason: "r"),
        ] {
            guard case .retryable = error.deliveryOutcome else {
                Issue.record("\(error) should be retried")
                continue
            }
        }
        #expect(
            TelegramAPIError.rateLimited(endpoint: "m", retryAfter: .seconds(3)).deliveryOutcome
                == .rateLimited(retryAfter: .seconds(3), reason: "m: rate limited by Telegram (retry after 3 s)"))
        guard case .rejected = TelegramAPIError.refused(endpoint: "m", .error(code: 403, description: "Forbidden")).deliveryOutcome else {
            Issue.record("a 4xx is final")
            return
        }
    }

    // MARK: - The token

    @Test func theTokenNeverPrints() async throws {
        #expect("\(Self.token)" == "<telegram token>")
        #expect(String(reflecting: Self.token) == "<telegram token>")
        #expect(TelegramToken(" 123:SECRET\n").secret == "123:SECRET")
        try await Self.withClient { client in
            #expect(!String(reflecting: client).contains("SECRET"))
            let request = try client.makeRequest("getMe", [:])
            #expect(request.url == "http://127.0.0.1:1/bot123:SECRET/getMe", "the token goes into the path, after a trimmed API URL")
            #expect("\(request.method)" == "POST")
        }
    }

    @Test func noReasonHoldsTheToken() async throws {
        var errors: [TelegramAPIError] = [
            .rateLimited(endpoint: "sendMessage", retryAfter: .seconds(3)), .refused(endpoint: "sendMessage", .migrated(newChatID: -100_1)),
            .server(endpoint: "getUpdates", status: 502), .timedOut(endpoint: "getUpdates", after: .seconds(40)), .cancelled(endpoint: "getUpdates"),
            .malformed(endpoint: "getMe", reason: "not JSON"),
            // Telegram never quotes the token, but a proxy might: the client redacts it.
            TelegramAPIError.refused(endpoint: "getMe", .error(code: 401, description: "Unauthorized for bot123:SECRET")).redacting(Self.token),
        ]
        for (status, body) in [
            (401, #"{"ok":false,"error_code":401,"description":"Unauthorized"}"#), (404, #"{"ok":false,"error_code":404,"description":"Not Found"}"#),
        ] {
            if case .failure(let error) = Self.read(status, body) { errors.append(error) }
        }
        try await Self.withClient { client in
            // Nothing listens on port 1: the connection is refused.
            let unreachable = await Self.failure { () throws(TelegramAPIError) in try await client.getMe() }
            guard case .unreachable(endpoint: "getMe", _) = unreachable else {
                Issue.record("expected a refused connection, got \(String(describing: unreachable))")
                return
            }
            errors.append(unreachable!)
            errors.append(await Self.failure { () throws(TelegramAPIError) in try await client.call("get/../Me", [:]) }!)
        }
        for error in errors {
            #expect(!error.reason.contains("SECRET") && !error.reason.contains("123:"), "\(error.reason)")
            #expect(!error.reason.contains("127.0.0.1") && !error.reason.contains("http"), "\(error.reason)")
            #expect(!"\(error)".contains("SECRET"))
        }
        #expect(errors.contains { $0.reason.contains("TELEGRAM_BOT_TOKEN") }, "a refused token says where to fix it")
    }

    // MARK: - The protocol

    /// A Bot API that answers every call from a script and records what was called: all a test
    /// double of `TelegramBotAPI` has to implement.
    final class ScriptedBotAPI: TelegramBotAPI {
        let answers: [String: Result<JSONValue, TelegramAPIError>]
        let called = Mutex<[String]>([])

        init(_ answers: [String: Result<JSONValue, TelegramAPIError>]) {
            self.answers = answers
        }

        func call(_ method: String, _ body: JSONValue, timeout: Duration?) async throws(TelegramAPIError) -> TelegramResult {
            called.withLock { $0.append(method) }
            return TelegramResult(try (answers[method] ?? .success(true)).get())
        }
    }

    @Test func theTypedMethodsNeedOnlyCall() async throws {
        let notModified = TelegramAPIError.refused(
            endpoint: "editMessageText", .error(code: 400, description: "Bad Request: message is not modified: specified new message content"))
        let api = ScriptedBotAPI([
            "sendMessage": .success(["message_id": 7]), "getMe": .success(["id": 1, "username": "RheaBot"]), "editMessageText": .failure(notModified),
        ])
        #expect(try await api.sendMessage(["chat_id": 42, "text": "hi"]) == 7)
        #expect(try await api.getMe() == TelegramBotIdentity(id: 1, username: "RheaBot", supportsInlineQueries: false))
        // An edit to the text the message already has succeeds.
        try await api.editMessageText(["chat_id": 42, "message_id": 7, "text": "hi"])
        #expect(api.called.withLock { $0 } == ["sendMessage", "getMe", "editMessageText"])
    }

    // MARK: - Around the network

    @Test func aCancelledPollEndsAtOnce() async throws {
        try await Self.withClient { client in
            let error = await Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return await Self.failure { () throws(TelegramAPIError) in
                    try await client.getUpdates(offset: 10, limit: 100, timeout: 50, allowedUpdates: ["message"])
                }
            }.value
            #expect(error == .cancelled(endpoint: "getUpdates"))
        }
    }

    @Test func aMessageThatWouldWaitTooLongIsHandedBackWithoutSending() async throws {
        let clock = ManualClock()
        let limiter = TelegramRateLimiter()
        // Six messages already booked for chat 42, at 0…5 s.
        for _ in 0..<6 { _ = limiter.reserve(chat: 42, now: clock.now) }
        try await Self.withClient(clock: clock, limiter: limiter) { client in
            // Had it been sent, the closed port would have made it `.unreachable`.
            let error = await Self.failure { () throws(TelegramAPIError) in try await client.sendMessage(["chat_id": 42, "text": "hi"]) }
            #expect(error == .rateLimited(endpoint: "sendMessage", retryAfter: .seconds(6)))
            limiter.pause(chat: -5, until: clock.now + .seconds(30))
            let paused = await Self.failure { () throws(TelegramAPIError) in try await client.editMessageText(["chat_id": "-5", "message_id": 1, "text": "x"]) }
            #expect(paused == .rateLimited(endpoint: "editMessageText", retryAfter: .seconds(30)))
        }
    }

    @Test func aMessageWaitsItsTurnOnTheClock() async throws {
        let clock = ManualClock()
        let limiter = TelegramRateLimiter()
        _ = limiter.reserve(chat: 42, now: clock.now)
        try await Self.withClient(clock: clock, limiter: limiter) { client in
            async let sent = Self.failure { () throws(TelegramAPIError) in try await client.sendMessage(["chat_id": 42, "text": "hi"]) }
            await clock.waitForSleepers(1)
            clock.advance(by: .seconds(1))
            // Its turn came: it went out, to nobody.
            guard case .unreachable = await sent else {
                Issue.record("expected the message to be sent after its wait")
                return
            }
        }
    }

    @Test func aMessageNeedsANumericChatID() async throws {
        try await Self.withClient { client in
            let error = await Self.failure { () throws(TelegramAPIError) in try await client.sendMessage(["chat_id": "@channel", "text": "hi"]) }
            #expect(error == .invalidRequest(endpoint: "sendMessage", reason: "chat_id is not a numeric chat id"))
        }
    }
}
