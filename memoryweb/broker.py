"""A Redis transport for Celery that survives the broker going away.

kombu 5.7's Redis channel, when it is closed after the connection to Redis was lost,
tries to put the messages it had delivered but not yet acknowledged back on their
queues. By then the transport has dropped its connection settings, so building the
client fails with `AttributeError: 'NoneType' object has no attribute 'hostname'`, and
the worker stops with "Unrecoverable error" instead of reconnecting. (With late acks a
worker always holds such messages: the run it is executing, and every countdown
message it keeps until it is due.) Acknowledging or rejecting, later, a message taken
from such a closed channel fails the same way.

Skipping that restore (or that acknowledgement) loses nothing: those messages also sit
in Redis's own index of unacknowledged messages, and the transport hands them out again
after the visibility timeout; runs and triggers are re-derived from the database by the sweep anyway
(apps.pipeline.scheduling). Selected by settings for `redis://` broker URLs.
"""

from __future__ import annotations

import logging

from kombu.transport import redis as kombu_redis

logger = logging.getLogger(__name__)


class QoS(kombu_redis.QoS):
    def _connection_gone(self, client=None) -> bool:
        # A closed channel has dropped its transport; kombu then fails building a client.
        transport = getattr(self.channel, "connection", None)
        return client is None and (transport is None or getattr(transport, "client", None) is None)

    def restore_unacked(self, client=None):
        if self._connection_gone(client):
            if self._delivered:
                logger.warning(
                    "broker connection lost with %d unacknowledged message(s); Redis redelivers them "
                    "after the visibility timeout", len(self._delivered),
                )
            self._delivered.clear()
            return None
        return super().restore_unacked(client)

    # A task that was running when the connection went away is acknowledged (late ack) on
    # its old, closed channel: the same missing client, raised from the event loop, stops
    # the worker. Its message stays in Redis's unacknowledged index and comes back after
    # the visibility timeout; every task is safe to run twice (a finished run is skipped,
    # triggers and the sweep re-read the database).
    def _settled_locally(self, delivery_tag, what: str) -> bool:
        if not self._connection_gone():
            return False
        logger.warning("broker connection lost before message %s was %s; Redis redelivers it after the "
                       "visibility timeout", delivery_tag, what)
        self._quick_ack(delivery_tag)
        return True

    def ack(self, delivery_tag):
        if not self._settled_locally(delivery_tag, "acknowledged"):
            super().ack(delivery_tag)

    def reject(self, delivery_tag, requeue=False):
        if not self._settled_locally(delivery_tag, "rejected"):
            super().reject(delivery_tag, requeue=requeue)


class Channel(kombu_redis.Channel):
    QoS = QoS


class RedisTransport(kombu_redis.Transport):
    Channel = Channel
