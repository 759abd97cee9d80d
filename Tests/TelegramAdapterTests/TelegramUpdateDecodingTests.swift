import Foundation
import RelayCore
import Testing

@testable import TelegramAdapter

/// Updates decode into the adapter's models of Telegram's shapes: leniently where Telegram adds
/// fields and kinds, and with the field named where an update cannot be read.
@Suite("Telegram updates, decoded")
struct TelegramUpdateDecodingTests {
    static func update(_ json: String) -> Result<TelegramUpdate, PayloadProblem> {
        Result { () throws(PayloadProblem) in try TelegramUpdate.decode(Array(json.utf8)) }
    }

    @Test func aMessageIsReadWithItsChatSenderEntitiesAndReply() throws {
        let json = #"""
            {"update_id": 7, "message": {"message_id": 70, "date": 1, "chat": {"id": -100, "type": "supergroup", "title": "Team"},
             "from": {"id": 42, "is_bot": false, "first_name": "Ada", "last_name": "L", "username": "ada"},
             "text": "/fix teh", "entities": [{"type": "bot_command", "offset": 0, "length": 4}, {"type": "custom_emoji", "offset": "x"}],
             "reply_to_message": {"message_id": 69, "caption": "the claim", "from": {"id": 9, "is_bot": true, "first_name": "B"}}}}
            """#
        let update = try Self.update(json).get()
        #expect(update.id == 7)
        guard case .message(let message) = update.kind else {
            Issue.record("not a message: \(update.kind)")
            return
        }
        #expect(message.chat.id == -100 && message.chat.isGroup && message.chat.title == "Team")
        #expect(message.from?.name == "Ada L")
        #expect(message.entities.map(\.text) == ["/fix"], "the odd entity is left out, the others kept")
        #expect(message.replyTo?.id == 69)
        #expect(message.replyTo?.text == "the claim")
        #expect(message.replyTo?.fromBot == true)
    }

    @Test func kindsTheRelayDoesNotHandleOrCannotUseAreOtherNotUnreadable() throws {
        for json in [
            #"{"update_id": 1, "edited_message": {"message_id": 2}}"#,
            #"{"update_id": 1, "message": "not an object"}"#,
            #"{"update_id": 1, "message": {"message_id": 2}}"#,
            #"{"update_id": 1, "callback_query": {"id": "q"}}"#,
            #"{"update_id": 1, "poll": {}, "future_field": [1, 2]}"#,
        ] {
            let update = try Self.update(json).get()
            #expect(update.id == 1 && update.kind == .other, "\(json)")
        }
    }

    @Test func anUpdateWithoutItsIDSaysSo() {
        #expect(Self.update(#"{"message": {}}"#) == .failure(PayloadProblem("Telegram update", "missing field `update_id`")))
        #expect(Self.update(#"{"update_id": "7"}"#) == .failure(PayloadProblem("Telegram update", "field `update_id` is not a number")))
        #expect(Self.update("[1]") == .failure(PayloadProblem("Telegram update", "the payload is not an object")))
        #expect(Self.update("not json") == .failure(PayloadProblem("Telegram update", "not valid JSON")))
    }

    @Test func aPolledBatchReadsEachUpdateOnItsOwn() throws {
        let body =
            #"{"ok": true, "result": [{"update_id": "x"}, {"update_id": 12, "message": {"message_id": 5, "chat": {"id": 1, "type": "private"}, "text": "hi"}}, 3]}"#
        let batch = try TelegramResult(body: Array(body.utf8)).decode([TelegramPolledUpdate].self, method: "getUpdates")
        #expect(batch.count == 3)
        #expect(batch[0].id == nil)
        #expect(batch[0].update == .failure(PayloadProblem("Telegram update", "field `result[0].update_id` is not a number")))
        #expect(batch[1].id == 12)
        #expect((try? batch[1].update.get())?.id == 12)
        #expect(batch[2].id == nil, "not even an object")
        if case .success = batch[2].update { Issue.record("a number read as an update") }
    }
}
