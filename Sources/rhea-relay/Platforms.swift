import DiscordAdapter
import RelayPlatform
import SlackAdapter
import TelegramAdapter

/// Every chat platform the relay can serve. Adding one is its module and one line here
/// (README, "Layout"); `serve` reads each one's configuration section and runs those that are on.
let chatPlatforms: [any ChatPlatform.Type] = [
    SlackPlatform.self,
    DiscordPlatform.self,
    TelegramPlatform.self,
]
