"""The openai backend encodes a re-encoded image once for the requests that show it together
(image order): concurrent requests wait for one encoding, and the URL is the one png_data_url
gives."""

from __future__ import annotations

import asyncio
import hashlib
import io

import pytest
from PIL import Image

from medlens.models import images
from medlens.models.images import EncodedImages, png_data_url


def jpeg(shade: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (24, 24), (shade, 80, 160)).save(buffer, format="JPEG")
    return buffer.getvalue()


def test_equal_images_are_encoded_once_and_a_full_cache_forgets_the_oldest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []
    encode = images.png_data_url

    def counting(data: bytes, name: str = "") -> str:
        calls.append(len(data))
        return encode(data, name)

    monkeypatch.setattr(images, "png_data_url", counting)
    pictures = [jpeg(shade) for shade in (10, 90, 170)]
    digests = [hashlib.sha256(p).hexdigest() for p in pictures]
    cache = EncodedImages(capacity=2)

    async def go() -> list[str]:
        together = [cache.url(pictures[0], digests[0]) for _ in range(8)]
        urls = await asyncio.gather(*together)
        urls.append(await cache.url(pictures[1], digests[1]))
        urls.append(await cache.url(pictures[2], digests[2]))  # the first one leaves the cache
        urls.append(await cache.url(pictures[0], digests[0]))
        return urls

    urls = asyncio.run(go())
    assert (
        len(calls) == 4
    )  # 8 requests together encoded the first image once; then 1, 1, and 1 again
    assert set(urls[:8]) == {encode(pictures[0])}
    assert urls[-1] == png_data_url(pictures[0])


def test_a_png_sent_as_stored_is_never_kept() -> None:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (1, 2, 3)).save(buffer, format="PNG")
    data = buffer.getvalue()
    cache = EncodedImages()
    url = asyncio.run(cache.url(data, hashlib.sha256(data).hexdigest()))
    assert url == png_data_url(data) and not cache._urls
