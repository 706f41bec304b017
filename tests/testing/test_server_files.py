"""The fake server's Files API, driven by the real SDK's ``client.beta.files``: upload,
list (paged), metadata, download (refused for an uploaded file, as the API refuses it),
delete, and an injected upload failure."""

from __future__ import annotations

import anthropic
import pytest

from nb_tools.testing import Fault
from nb_tools.testing.server import FakeMessagesServer

BETA = ["files-api-2025-04-14"]


async def test_the_files_api_as_the_sdk_speaks_it() -> None:
    with FakeMessagesServer() as srv:
        client = anthropic.AsyncAnthropic(base_url=srv.base_url, api_key="test", max_retries=0)
        made = [
            await client.beta.files.upload(
                file=(f"f{i}.txt", f"text {i}".encode(), "text/plain"), betas=BETA
            )
            for i in range(3)
        ]
        assert made[0].type == "file" and made[0].size_bytes == 6
        assert made[0].filename == "f0.txt" and made[0].mime_type == "text/plain"
        assert made[0].downloadable is False

        page = await client.beta.files.list(limit=2, betas=BETA)
        assert [f.id for f in page.data] == [made[2].id, made[1].id]  # newest first
        every = [f.id async for f in client.beta.files.list(limit=2, betas=BETA)]
        assert every == [m.id for m in reversed(made)]  # the SDK follows next_page

        meta = await client.beta.files.retrieve_metadata(made[1].id, betas=BETA)
        assert meta.id == made[1].id and meta.size_bytes == 6
        with pytest.raises(anthropic.BadRequestError, match="not downloadable"):
            await client.beta.files.download(made[1].id, betas=BETA)

        deleted = await client.beta.files.delete(made[1].id, betas=BETA)
        assert (deleted.id, deleted.type) == (made[1].id, "file_deleted")
        with pytest.raises(anthropic.NotFoundError, match="File not found"):
            await client.beta.files.retrieve_metadata(made[1].id, betas=BETA)
        with pytest.raises(anthropic.BadRequestError, match="beta header"):
            await client.beta.files.list()
        assert sorted(srv.files) == sorted([made[0].id, made[2].id])

        srv.upload_fault = Fault(status=413, message="request_too_large")
        with pytest.raises(anthropic.APIStatusError, match="request_too_large"):
            await client.beta.files.upload(file=("x.txt", b"x", "text/plain"), betas=BETA)
        again = await client.beta.files.upload(file=("x.txt", b"x", "text/plain"), betas=BETA)
        assert again.id in srv.files  # the fault was used up
        await client.close()
