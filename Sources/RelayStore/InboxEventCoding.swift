import Foundation
import RelayCore

/// How an inbox item's event is kept in the `event` column: JSON, as parked runs always were.
enum InboxEventCoding {
    static func encode(_ event: Event) throws -> String {
        String(decoding: try JSONEncoder().encode(event), as: UTF8.self)
    }

    static func decode(_ text: String) throws -> Event {
        try JSONDecoder().decode(Event.self, from: Data(text.utf8))
    }
}
