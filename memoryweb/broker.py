"""A Redis transport for Celery that survives the broker going away.

kombu 5.7's Redis channel, when it is closed after the connection to Redis was lost,
tries to put the messages it had delivered but not yet acknowledged back on their
queues. By then the transport has dropped its connection settings, so building the
client fails with `AttributeError: 'NoneType' object has no attribute 'hostname'`, and
the worker stops with "Unrecoverable error" instead of reconnecting. (With late acks a
worker always holds such messages: the run it is executing, and every countdown
message it keeps until it is due.)

Skipping that restore loses nothing: those messages also sit in Redis's own index of
unacknowledged messages, and the transport hands them out again after the visibility
timeout; runs and triggers are re-derived from the database by the sweep anyway
(apps.pipeline.scheduling). Selected by settings for `redis://` broker URLs.
"""

from __future__ import annotations

import logging

from kombu.transport import redis as kombu_redis

logger = logging.getLogger(__name__)


class QoS(kombu_redis.QoS):
    def restore_unacked(self, client=None):
        transport = getattr(self.channel, "connection", None)
        if client is None and (transport is None or getattr(transport, "client", None) is None):
            if self._delivered:
                logger.warning(
                    "broker connection lost with %d unacknowledged message(s); Redis redelivers them "
                    "after the visibility timeout", len(self._delivered),
                )
            self._delivered.clear()
            return None
        return super().restore_unacked(client)


class Channel(kombu_redis.Channel):
    QoS = QoS


class RedisTransport(kombu_redis.Transport):
    Channel = Channel
